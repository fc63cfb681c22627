-- What this database holds: the schema_version table of a warden schema, the schema_migrations
-- table that warden 0.1.0 kept, and whether warden's tables exist at all. Nulls where absent.
-- nullable: version_table, migrations_table, tenants_table
SELECT to_regclass('schema_version')::text AS version_table,
       to_regclass('schema_migrations')::text AS migrations_table,
       to_regclass('tenants')::text AS tenants_table;
