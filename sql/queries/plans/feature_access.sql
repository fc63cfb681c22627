-- $1 tenant_id, $2 feature. No row: unknown tenant or feature.
SELECT verdict, required_plan, access_mode FROM feature_access($1, $2);
