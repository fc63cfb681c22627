-- Tests only: changes what a feature requires, as an operator editing the catalog would. $1 feature, $2 required_plan, $3 access_mode
UPDATE features SET required_plan = $2, access_mode = $3 WHERE feature = $1
RETURNING feature;
