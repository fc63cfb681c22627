-- Tests only: the server process of the session that runs this statement.
SELECT pg_backend_pid() AS pid;
