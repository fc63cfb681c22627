-- The entities named (pairs of $2 types and $3 ids) of tenant $1, after a first row holding only
-- the tenant's entity head version, read by the same snapshot (entity_lookup()).
-- nullable: head, type, id, attributes, parents, version
SELECT head, type, id, attributes, parents, version FROM entity_lookup($1::text, $2::text[], $3::text[]);
