-- Writes a batch of entities, all or none (entities_upsert()). $1 tenant_id, $2 member_id, $3 json array of entities
SELECT upserted, version, stored FROM entities_upsert($1, $2, $3::json);
