-- A direct status change of an approval, as an operator in psql might try. $1 approval_id, $2 status
UPDATE approvals SET status = $2 WHERE approval_id = $1 RETURNING status;
