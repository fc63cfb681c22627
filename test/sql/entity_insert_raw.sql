-- An entity written straight into the table, past the procedures (the guard's test). $1 tenant_id, $2 type, $3 id, $4 attributes jsonb, $5 parents jsonb
INSERT INTO entities (tenant_id, type, id, attributes, parents, version) VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, 1);
