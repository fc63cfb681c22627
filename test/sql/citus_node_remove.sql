-- Tests only, on a Citus coordinator: a node that holds nothing leaves the cluster. $1 host, $2 port
SELECT citus_remove_node($1::text, $2::int);
