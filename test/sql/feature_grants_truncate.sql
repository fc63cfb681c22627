-- Tests only: tries to empty the feature grants of every tenant.
TRUNCATE feature_grants;
