-- Tests only: the bounded-repetition patterns of migration 004 against the length + unbounded
-- class checks that replaced them in 009, for each string of $1 (jsonb array). Rows where they differ.
SELECT s,
       s ~ '^[\x21-\x7e]{1,128}$' AS old_request_id, (length(s) BETWEEN 1 AND 128 AND s ~ '^[\x21-\x7e]+$') AS new_request_id,
       s ~ '^0x[0-9a-f]{64}$' AS old_hash, (length(s) = 66 AND s ~ '^0x[0-9a-f]+$') AS new_hash,
       s ~ '^rcpt_[0-9A-Za-z]{22}$' AS old_receipt_id, (length(s) = 27 AND s ~ '^rcpt_[0-9A-Za-z]+$') AS new_receipt_id
FROM jsonb_array_elements_text($1::jsonb) AS s
WHERE (s ~ '^[\x21-\x7e]{1,128}$') IS DISTINCT FROM (length(s) BETWEEN 1 AND 128 AND s ~ '^[\x21-\x7e]+$')
   OR (s ~ '^0x[0-9a-f]{64}$') IS DISTINCT FROM (length(s) = 66 AND s ~ '^0x[0-9a-f]+$')
   OR (s ~ '^rcpt_[0-9A-Za-z]{22}$') IS DISTINCT FROM (length(s) = 27 AND s ~ '^rcpt_[0-9A-Za-z]+$');
