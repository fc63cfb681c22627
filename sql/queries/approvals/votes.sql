-- An approval's votes in the order they were cast. $1 approval_id
SELECT v.member_id, v.vote, iso_time(v.voted_at) AS at, v.receipt_id
FROM approval_votes v
WHERE v.approval_id = $1
ORDER BY v.voted_at, v.receipt_id;
