-- The entities named (pairs of $2 types and $3 ids) of tenant $1, after a first row holding only
-- the tenant's key context epoch, read before them (entity_lookup()).
-- nullable: epoch, type, id, attributes, parents, version
SELECT epoch, type, id, attributes, parents, version FROM entity_lookup($1::text, $2::text[], $3::text[]);
