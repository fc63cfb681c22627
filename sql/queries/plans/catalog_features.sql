SELECT feature, name, description, required_plan, access_mode FROM features ORDER BY position;
