-- Replaces an endpoint's sealed secrets by the same secrets sealed under the new service secret, if still the ones read.
-- $1 webhook_id, $2 secret_sealed read, $3 previous_secret_sealed read, $4 and $5 the same sealed anew
SELECT webhook_reseal($1, $2, $3, $4, $5) AS resealed;
