-- Test only. $1 request_id
DELETE FROM upgrade_requests WHERE request_id = $1 RETURNING request_id;
