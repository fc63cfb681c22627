-- $1 the schema version just applied
INSERT INTO schema_version (version) VALUES ($1);
