-- Changes the settings named (NULL: unchanged). $1 tenant_id, $2 require_mfa, $3 allow_self_approval
UPDATE tenants SET require_mfa = coalesce($2::boolean, require_mfa), allow_self_approval = coalesce($3::boolean, allow_self_approval)
 WHERE tenant_id = $1
RETURNING require_mfa, allow_self_approval;
