-- What a tenant's store holds, for a policy's entity schema (src/decide/entities.ts, unknownToStore()):
-- each stored entity type with the attribute names some entity of it has (a type whose entities
-- have no attributes: one row with attribute NULL). $1 tenant_id
SELECT e.type, k.name AS attribute
FROM entities e
LEFT JOIN LATERAL jsonb_object_keys(e.attributes) AS k(name) ON true
WHERE e.tenant_id = $1
GROUP BY e.type, k.name;
