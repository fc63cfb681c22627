-- An approval's votes in the order they were cast. $1 tenant_id, $2 approval_id
SELECT v.member_id, v.account_id, v.vote, iso_time(v.voted_at) AS at, v.receipt_id
FROM approval_votes v
WHERE v.tenant_id = $1 AND v.approval_id = $2
ORDER BY v.voted_at, v.receipt_id;
