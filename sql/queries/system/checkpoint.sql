-- Writes every change to the data files, so a copy of the data directory needs no WAL replay
-- (the embedded database's backup, src/db/pglite.ts).
CHECKPOINT;
