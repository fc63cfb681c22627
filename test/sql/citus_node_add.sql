-- Tests only, on a Citus coordinator: a new worker joins this database's cluster. $1 host, $2 port
SELECT citus_add_node($1::text, $2::int) AS node_id;
