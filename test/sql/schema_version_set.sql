-- Tests only: pretend the database holds another schema version (ops refuse it). $1 version
UPDATE schema_version SET version = $1 RETURNING version;
