-- Tests only: tries to rewrite a stored policy version (the database must refuse). $1 tenant_id, $2 version
UPDATE policies SET created_at = now() WHERE tenant_id = $1 AND version = $2 RETURNING version;
