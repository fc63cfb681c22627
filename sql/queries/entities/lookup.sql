-- The entities named (pairs of $2 types and $3 ids) of tenant $1, with the tenant's entity head
-- version read by the same snapshot; always one row at least (the head with no entity when none
-- is found).
-- nullable: type, id, attributes, parents, version
SELECT h.version AS head, e.type, e.id, e.attributes, e.parents, e.version
FROM entity_head_versions(ARRAY[$1::text]) h
LEFT JOIN entities e
  ON e.tenant_id = $1::text AND (e.type, e.id) IN (SELECT r.type, r.id FROM unnest($2::text[], $3::text[]) AS r(type, id));
