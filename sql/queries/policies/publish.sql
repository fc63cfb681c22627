-- WP003: the stored test suite is no longer $4; run the new one and publish again.
-- $1 tenant_id, $2 document as JCS text, $3 its hash, $4 the stored suite's text the tests ran (NULL: none stored)
SELECT policy_id, version, hash, document, created_at FROM policy_publish($1, $2, $3, $4);
