-- $1 tenant_id, $2 document as JCS text, $3 its hash
SELECT policy_id, version, hash, document, created_at FROM policy_publish($1, $2, $3);
