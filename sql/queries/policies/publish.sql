-- WP003: the stored test suite is no longer $4; run the new one and publish again. WT001/WT021: the member may not publish.
-- $1 tenant_id, $2 document as JCS text, $3 its hash, $4 the stored suite's text the tests ran (NULL: none stored), $5 the publishing member
-- nullable: published_by
SELECT policy_id, version, hash, document, created_at, published_by FROM policy_publish($1, $2, $3, $4, $5);
