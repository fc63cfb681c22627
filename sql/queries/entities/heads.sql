-- The entity head version of each tenant named that wrote an entity (the others: 0): what the
-- store's tests and an operator read to see writes move it. $1 text[] of tenant_id
SELECT tenant_id, version FROM entity_head_versions($1::text[]);
