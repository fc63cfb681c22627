-- The entity head version of each tenant named (0: none written). $1 text[] of tenant_id
SELECT tenant_id, version FROM entity_head_versions($1::text[]);
