-- One entity of a tenant. $1 tenant_id, $2 type, $3 id
SELECT type, id, attributes, parents, version, iso_time(updated_at) AS updated_at, updated_by
FROM entities
WHERE tenant_id = $1 AND type = $2 AND id = $3;
