-- usage_read() for one tenant's counter (it locks the tenant's log head). $1 tenant_id
SELECT total FROM usage_read(ARRAY[$1::text], json_build_array(json_build_object('tenant_id', $1::text, 'counter', 'c', 'scope', '*', 'window_start', '2030-01-01T00:00:00.000Z')));
