-- Every stored code and token hash of a grant, for the test that no secret is stored in the clear.
-- $1 tenant_id, $2 grant_id
SELECT token_hash AS hash FROM oauth_tokens WHERE tenant_id = $1 AND grant_id = $2
UNION ALL
SELECT code_hash FROM oauth_codes WHERE tenant_id = $1 AND grant_id = $2;
