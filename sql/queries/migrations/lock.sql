-- Serialises migration runs of every instance on this database until the transaction ends.
SELECT pg_advisory_xact_lock(hashtext('warden.migrations'))::text AS locked;
