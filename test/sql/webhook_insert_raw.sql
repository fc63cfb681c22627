-- Tests only: an endpoint inserted straight into the table with a status. $1 webhook_id, $2 tenant_id, $3 status, $4 sealed secret
INSERT INTO webhooks (webhook_id, tenant_id, url, events, status, secret_sealed, disabled_at, disabled_reason)
VALUES ($1, $2, 'https://93.184.215.14/hook', ARRAY['*'], $3, $4,
        CASE WHEN $3 = 'disabled' THEN now() END, CASE WHEN $3 = 'disabled' THEN 'by hand' END)
RETURNING webhook_id;
