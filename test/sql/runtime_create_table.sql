-- Tests only: DDL the runtime role must not be able to run.
CREATE TABLE runtime_role_probe (id integer);
