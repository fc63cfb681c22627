-- Deletes one entity (entity_delete(); WE003 when there is none). $1 tenant_id, $2 member_id, $3 type, $4 id
SELECT version, stored FROM entity_delete($1, $2, $3, $4);
