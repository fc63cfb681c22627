-- Tests only: a grant row for any feature (feature_grant() accepts request-only features only, and the catalog may change after). $1 tenant_id, $2 feature
INSERT INTO feature_grants (tenant_id, feature, granted_by) VALUES ($1, $2, 'test')
RETURNING feature;
