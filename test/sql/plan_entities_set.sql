-- Sets a plan's entities limit (a test's small limit, then back). $1 plan, $2 entities
UPDATE plans SET entities = $2 WHERE plan = $1 RETURNING plan, entities;
