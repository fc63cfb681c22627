-- The schema version recorded when the baseline was applied (only where schema_version exists).
SELECT version FROM schema_version;
