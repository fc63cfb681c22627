-- Daily protect and execute counts for the $2 UTC days ending with $3 ('YYYY-MM-DD'), oldest
-- first, zero-filled. $1 tenant_id
SELECT to_char(d.day, 'YYYY-MM-DD') AS day, coalesce(u.protect_count, 0) AS protect, coalesce(u.execute_count, 0) AS execute
FROM generate_series($3::date - ($2::int - 1), $3::date, interval '1 day') AS d(day)
LEFT JOIN usage_daily u ON u.tenant_id = $1 AND u.day = d.day::date
ORDER BY d.day;
