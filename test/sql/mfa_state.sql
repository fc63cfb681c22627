-- Tests only: a person's second factor as stored, and its recovery codes. $1 account_id
SELECT m.status, m.secret_sealed, m.last_step,
       (SELECT count(*)::int FROM mfa_recovery_codes c WHERE c.account_id = m.account_id) AS codes,
       (SELECT coalesce(array_agg(c.code_hash), '{}') FROM mfa_recovery_codes c WHERE c.account_id = m.account_id) AS code_hashes
  FROM mfa_totp m WHERE m.account_id = $1;
