SELECT plan, protect_per_day, execute_per_day, receipts_stored, entities FROM plans ORDER BY rank;
