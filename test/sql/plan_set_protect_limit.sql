-- Tests only: changes a plan's daily protect limit, as an operator editing the catalog would. $1 plan, $2 protect_per_day
UPDATE plans SET protect_per_day = $2 WHERE plan = $1 RETURNING plan;
