-- Changing an approval's terms after the fact. $1 approval_id, $2 quorum
UPDATE approvals SET quorum = $2 WHERE approval_id = $1 RETURNING quorum;
