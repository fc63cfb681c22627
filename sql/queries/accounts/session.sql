-- The tenant behind a JWT, with the epoch its sessions must carry. $1 tenant_id
SELECT tenant_id, plan, session_epoch FROM tenant_session($1);
