SELECT pg_notify($1::text, $2::text) IS NULL AS sent
