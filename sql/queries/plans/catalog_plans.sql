SELECT plan, protect_per_day, execute_per_day, receipts_stored FROM plans ORDER BY rank;
