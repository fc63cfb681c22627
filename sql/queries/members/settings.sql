-- The tenant's settings. $1 tenant_id
SELECT require_mfa, allow_self_approval, revoke_keys_on_member_removal FROM tenants WHERE tenant_id = $1;
