-- Tests only: what the runtime role may do to webhook endpoints and deliveries.
SELECT has_table_privilege('warden_runtime', 'webhooks', 'DELETE') AS delete_webhook,
       has_table_privilege('warden_runtime', 'webhook_deliveries', 'DELETE') AS delete_delivery,
       has_column_privilege('warden_runtime', 'webhooks', 'url', 'UPDATE') AS update_url,
       has_column_privilege('warden_runtime', 'webhooks', 'events', 'UPDATE') AS update_events,
       has_column_privilege('warden_runtime', 'webhooks', 'tenant_id', 'UPDATE') AS update_tenant,
       has_column_privilege('warden_runtime', 'webhooks', 'status', 'UPDATE') AS update_status,
       has_column_privilege('warden_runtime', 'webhooks', 'secret_sealed', 'UPDATE') AS update_secret,
       has_column_privilege('warden_runtime', 'webhook_deliveries', 'event', 'UPDATE') AS update_delivery_event,
       has_column_privilege('warden_runtime', 'webhook_deliveries', 'last_status_code', 'UPDATE') AS update_delivery_status;
