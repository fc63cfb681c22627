-- A page of a tenant's entities in (type, id) order, after the position ($3, $4) when given, of
-- one type when $2 is given. $1 tenant_id, $2 type, $3 after type, $4 after id, $5 count
SELECT type, id, attributes, parents, version, iso_time(updated_at) AS updated_at, updated_by
FROM entities
WHERE tenant_id = $1
  AND ($2::text IS NULL OR type = $2::text)
  AND ($3::text IS NULL OR (type, id) > ($3::text, $4::text))
ORDER BY type, id
LIMIT $5;
