INSERT INTO schema_migrations (version) VALUES ($1);
