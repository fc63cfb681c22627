-- Tests only: tries to delete a stored policy version (the database must refuse). $1 tenant_id, $2 version
DELETE FROM policies WHERE tenant_id = $1 AND version = $2 RETURNING version;
