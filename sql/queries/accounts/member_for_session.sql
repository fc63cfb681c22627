-- The membership a new session of the person opens in ($2 NULL: the last used, else the oldest;
-- a tenant id: that one, remembered as the last). No row: none. $1 account_id, $2 tenant_id or NULL
SELECT tenant_id, member_id, role, member_epoch FROM member_for_session($1, $2);
