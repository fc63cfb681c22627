-- New recovery codes for the active factor; every earlier one stops working (WA010: none active).
-- $1 account_id, $2 the ten new codes' hashes (text[])
SELECT mfa_recovery_codes_replace($1, $2::text[]) AS replaced;
