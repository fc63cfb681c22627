-- An approval's outcome with its signed receipt (approval_settle()). $1 approval_id, $2 status, $3 receipt
SELECT status, decided_at, execute_before FROM approval_settle($1, $2, $3::json);
