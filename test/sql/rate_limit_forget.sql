-- Tests only: forgets every per-address counter of one client address bucket (all routes), so a
-- test over the wire (always 127.0.0.1) starts from zero on a database that keeps counters. $1 bucket
DELETE FROM auth_rate_limits WHERE starts_with(bucket, 'ip:' || $1 || ':') RETURNING bucket;
