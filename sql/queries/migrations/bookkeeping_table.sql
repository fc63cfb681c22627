-- One row: the version of the baseline (sql/schema/) this database was made from.
CREATE TABLE schema_version (
  version     text PRIMARY KEY,
  applied_at  timestamptz NOT NULL DEFAULT now(),
  one_row     boolean NOT NULL DEFAULT true UNIQUE CHECK (one_row)
);
