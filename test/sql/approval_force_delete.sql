-- Deleting an approval, as an operator in psql might try. $1 approval_id
DELETE FROM approvals WHERE approval_id = $1 RETURNING approval_id;
