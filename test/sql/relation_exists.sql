-- Tests only: the relation's name when it exists (committed and visible), else null. $1 name
SELECT to_regclass($1)::text AS relation;
