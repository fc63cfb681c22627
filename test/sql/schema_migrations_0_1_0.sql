-- Tests only: what a database made by warden 0.1.0 holds first, its migrations table.
CREATE TABLE schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
