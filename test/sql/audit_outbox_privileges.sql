-- Tests only: what the runtime role may do to audit_outbox, column by column.
SELECT has_table_privilege('warden_runtime', 'audit_outbox', 'INSERT') AS insert,
       has_table_privilege('warden_runtime', 'audit_outbox', 'DELETE') AS delete,
       has_column_privilege('warden_runtime', 'audit_outbox', 'receipt_id', 'UPDATE') AS update_receipt_id,
       has_column_privilege('warden_runtime', 'audit_outbox', 'appended_at', 'UPDATE') AS update_appended_at,
       has_column_privilege('warden_runtime', 'audit_outbox', 'operator', 'UPDATE') AS update_operator,
       has_column_privilege('warden_runtime', 'audit_outbox', 'target', 'UPDATE') AS update_target;
