-- Tests only: withdraws a grant as sql/ops/features_revoke.sql does. $1 tenant_id, $2 feature
SELECT tenant_id, feature, revoked FROM feature_revoke($1, $2);
