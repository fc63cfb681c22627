-- PATCH /customer/keys/{key_id}: changes an active key's properties. No row: the key is unknown or another tenant's.
-- WK001: the key is not active; WK004, WK005: properties the database refuses; WT002 the member's role.
-- $1 tenant_id, $2 key_id, $3 jsonb properties (a field absent: unchanged; null: cleared), $4 the member who changes it
SELECT key_id, changed FROM api_key_update($1, $2, $3::jsonb, $4);
