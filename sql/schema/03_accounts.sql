-- Tenants (the customers that own keys, policies and receipts), the people who work in them
-- (accounts, one per email, members of one or more tenants), and a person's lifecycle: sessions,
-- one-time tokens for email verification and password reset, password change, the second factor,
-- and brute-force counters for /auth. Members, roles and invitations: 03_members.sql; signup,
-- which makes the tenant with its owner and first key: 05_members_and_keys.sql.
-- Refusals raise class WA (docs/error_codes.md): WA001 invalid_token, WA002 token_expired,
-- WA003 token_used, WA004 the current password does not match.
--
-- Token times are the application's clock, passed in as p_now, so tests can move it.

CREATE TABLE tenants (
  tenant_id          text PRIMARY KEY CHECK (tenant_id ~ '^cust_[0-9A-Za-z]{22}$'),
  plan               text NOT NULL DEFAULT 'free' REFERENCES plans (plan),
  -- Moved by triggers whenever anything a key of this tenant is authorised by changes (05_keys.sql).
  key_context_epoch  bigint NOT NULL DEFAULT 0 CHECK (key_context_epoch >= 0),
  -- Settings an owner changes (PUT /customer/settings): members without a second factor may only
  -- enrol one; a single-member tenant's owner may vote on approvals of its own keys; removing a
  -- member revokes the keys they created (member_remove()).
  require_mfa          boolean NOT NULL DEFAULT false,
  allow_self_approval  boolean NOT NULL DEFAULT false,
  revoke_keys_on_member_removal  boolean NOT NULL DEFAULT false,
  -- The approved upgrade request that set the plan (NULL: the plan the tenant signed up on); the
  -- plan guard accepts a new plan only with the request that approved it (10_upgrades.sql).
  plan_request_id    text,
  created_at         timestamptz NOT NULL DEFAULT now()
);

-- A person: one email, one password, one second factor, whatever tenants they are a member of.
CREATE TABLE accounts (
  account_id         text PRIMARY KEY CHECK (account_id ~ '^acct_[0-9A-Za-z]{22}$'),
  -- Stored lower-cased and trimmed, so uniqueness is case-insensitive.
  email              text NOT NULL CHECK (email = lower(btrim(email)) AND length(email) BETWEEN 3 AND 254),
  password_hash      text NOT NULL CHECK (password_hash LIKE '$2%'),
  email_verified_at  timestamptz,
  -- Bumped to end every session of the person, in every tenant (JWTs carry the epoch they were issued under).
  session_epoch      integer NOT NULL DEFAULT 0 CHECK (session_epoch >= 0),
  -- The tenant the person's last session was of: a login answers a session of it while they are still a member.
  last_tenant_id     text REFERENCES tenants (tenant_id),
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX accounts_email_key ON accounts (email);

-- ---------------------------------------------------------------------------------------------
-- One-time tokens. Only the SHA-256 of a token is kept; the outbox row of its mail holds it sealed by
-- the service until its message is sent.
CREATE TABLE auth_tokens (
  token_hash   text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  account_id   text NOT NULL REFERENCES accounts (account_id),
  purpose      text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
  -- active -> used (redeemed once) or superseded (a newer request, or a completed reset/change).
  status       text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'used', 'superseded')),
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  finished_at  timestamptz,
  CONSTRAINT auth_tokens_lifetime CHECK (expires_at > created_at),
  CONSTRAINT auth_tokens_finished_at_matches_status CHECK ((status = 'active') = (finished_at IS NULL))
);
CREATE INDEX auth_tokens_account_idx ON auth_tokens (account_id, purpose) WHERE status = 'active';
-- A new verification request replaces the old link: one live verification token per account.
CREATE UNIQUE INDEX auth_tokens_one_active_verification ON auth_tokens (account_id)
  WHERE purpose = 'verify_email' AND status = 'active';

CREATE FUNCTION auth_token_digest(p_token text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT encode(sha256(convert_to(p_token, 'UTF8')), 'hex') $$;
COMMENT ON FUNCTION auth_token_digest(text) IS
  'Lowercase hex SHA-256 of a token: the only form in which tokens are stored or looked up.';

CREATE FUNCTION auth_token_check(p_token text, p_purpose text, p_now timestamptz) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT coalesce((
    SELECT CASE
             WHEN t.status = 'used' THEN 'token_used'
             WHEN t.status = 'superseded' THEN 'invalid_token'
             WHEN t.expires_at <= p_now THEN 'token_expired'
             ELSE 'valid'
           END
      FROM auth_tokens t
     WHERE t.token_hash = auth_token_digest(p_token) AND t.purpose = p_purpose
  ), 'invalid_token')
$$;
COMMENT ON FUNCTION auth_token_check(text, text, timestamptz) IS
  'What redeeming the token would do, without redeeming it: valid, invalid_token (unknown, other purpose or superseded), token_expired or token_used.';

-- Redeems a token exactly once: the row lock makes a second, parallel redemption wait and then
-- see status 'used'.
CREATE FUNCTION auth_token_take(p_token text, p_purpose text, p_now timestamptz) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v auth_tokens%ROWTYPE;
BEGIN
  SELECT * INTO v FROM auth_tokens
   WHERE token_hash = auth_token_digest(p_token) AND purpose = p_purpose
     FOR UPDATE;
  IF NOT FOUND OR v.status = 'superseded' THEN
    RAISE EXCEPTION 'invalid token' USING ERRCODE = 'WA001';
  ELSIF v.status = 'used' THEN
    RAISE EXCEPTION 'token already used' USING ERRCODE = 'WA003';
  ELSIF v.expires_at <= p_now THEN
    RAISE EXCEPTION 'token expired' USING ERRCODE = 'WA002';
  END IF;
  UPDATE auth_tokens SET status = 'used', finished_at = p_now WHERE token_hash = v.token_hash;
  RETURN v.account_id;
END $$;
COMMENT ON FUNCTION auth_token_take(text, text, timestamptz) IS
  'Marks an active, unexpired token used and returns its account; else raises WA001 invalid_token, WA002 token_expired or WA003 token_used.';

-- ---------------------------------------------------------------------------------------------
-- Email verification.
-- p_token_sealed: the same token sealed by the service (src/crypto/secret-box.ts); only it waits
-- in the outbox, so a copy of the database holds no live link (the hash alone is kept after).
CREATE FUNCTION email_verification_issue(p_account_id text, p_token text, p_token_sealed text, p_now timestamptz) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_email text;
  v_verified timestamptz;
  v_tenant text;
BEGIN
  -- The account row lock serialises concurrent requests, so exactly one token stays live.
  SELECT email, email_verified_at, last_tenant_id INTO v_email, v_verified, v_tenant FROM accounts WHERE account_id = p_account_id FOR UPDATE;
  IF NOT FOUND OR v_verified IS NOT NULL THEN
    RETURN NULL;
  END IF;
  UPDATE auth_tokens SET status = 'superseded', finished_at = p_now
   WHERE account_id = p_account_id AND purpose = 'verify_email' AND status = 'active';
  INSERT INTO auth_tokens (token_hash, account_id, purpose, created_at, expires_at)
  VALUES (auth_token_digest(p_token), p_account_id, 'verify_email', p_now, p_now + interval '24 hours');
  RETURN mail_enqueue('verify_email', v_email, v_tenant, jsonb_build_object('token_sealed', p_token_sealed));
END $$;
COMMENT ON FUNCTION email_verification_issue(text, text, text, timestamptz) IS
  'New 24 h verification token for an unverified account (older ones stop working) and its email queued; returns the outbox id, NULL when the address is already verified.';

CREATE FUNCTION email_verification_confirm(p_token text, p_now timestamptz)
RETURNS TABLE (account_id text, verified_at text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_account text;
  v_verified timestamptz;
BEGIN
  v_account := auth_token_take(p_token, 'verify_email', p_now);
  -- The time formed after the update: a distributed cluster refuses iso_time() in RETURNING (docs/scaling.md).
  UPDATE accounts t SET email_verified_at = coalesce(t.email_verified_at, p_now)
   WHERE t.account_id = v_account
  RETURNING t.email_verified_at INTO v_verified;
  IF FOUND THEN
    RETURN QUERY SELECT v_account, iso_time(v_verified);
  END IF;
END $$;
COMMENT ON FUNCTION email_verification_confirm(text, timestamptz) IS
  'Redeems a verification token (WA001/WA002/WA003 on refusal) and marks the account''s email verified.';

-- ---------------------------------------------------------------------------------------------
-- Password reset and change.
-- p_token_sealed: as for email_verification_issue().
CREATE FUNCTION password_reset_request(p_email text, p_token text, p_token_sealed text, p_now timestamptz)
RETURNS TABLE (account_id text, tenant_id text, mail_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_account text;
  v_tenant text;
BEGIN
  SELECT t.account_id, t.last_tenant_id INTO v_account, v_tenant FROM accounts t WHERE t.email = p_email;
  IF NOT FOUND THEN
    RETURN; -- nothing is sent to an unregistered address
  END IF;
  INSERT INTO auth_tokens (token_hash, account_id, purpose, created_at, expires_at)
  VALUES (auth_token_digest(p_token), v_account, 'reset_password', p_now, p_now + interval '24 hours');
  account_id := v_account;
  tenant_id := v_tenant;
  mail_id := mail_enqueue('reset_password', p_email, v_tenant, jsonb_build_object('token_sealed', p_token_sealed));
  RETURN NEXT;
END $$;
COMMENT ON FUNCTION password_reset_request(text, text, text, timestamptz) IS
  'For a registered email: a 24 h reset token and its email queued (one row back); for any other address nothing (no row).';

CREATE FUNCTION password_reset_confirm(p_token text, p_password_hash text, p_now timestamptz)
RETURNS TABLE (account_id text, session_epoch integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_account text;
BEGIN
  v_account := auth_token_take(p_token, 'reset_password', p_now);
  UPDATE auth_tokens a SET status = 'superseded', finished_at = p_now
   WHERE a.account_id = v_account AND a.purpose = 'reset_password' AND a.status = 'active';
  -- The reset mail reached this address, which proves it as well as a verification would.
  RETURN QUERY
    UPDATE accounts t
       SET password_hash = p_password_hash,
           session_epoch = t.session_epoch + 1,
           email_verified_at = coalesce(t.email_verified_at, p_now)
     WHERE t.account_id = v_account
    RETURNING t.account_id, t.session_epoch;
END $$;
COMMENT ON FUNCTION password_reset_confirm(text, text, timestamptz) IS
  'Redeems a reset token (WA001/WA002/WA003 on refusal), sets the new bcrypt hash, ends every session (epoch + 1) and kills the account''s other reset tokens.';

CREATE FUNCTION password_change(p_account_id text, p_current_hash text, p_new_hash text, p_now timestamptz)
RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_epoch integer;
BEGIN
  -- Compare-and-set on the hash the caller verified the current password against, so a change
  -- or reset that lands in between makes this one fail instead of silently winning.
  UPDATE accounts SET password_hash = p_new_hash, session_epoch = session_epoch + 1
   WHERE account_id = p_account_id AND password_hash = p_current_hash
  RETURNING session_epoch INTO v_epoch;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'current password does not match' USING ERRCODE = 'WA004';
  END IF;
  UPDATE auth_tokens SET status = 'superseded', finished_at = p_now
   WHERE account_id = p_account_id AND purpose = 'reset_password' AND status = 'active';
  RETURN v_epoch;
END $$;
COMMENT ON FUNCTION password_change(text, text, text, timestamptz) IS
  'Replaces the password hash if it is still p_current_hash (else WA004), ends every session and kills pending reset tokens; returns the new session epoch.';

-- ---------------------------------------------------------------------------------------------
-- Brute-force limits: fixed windows per bucket ('ip:<address or /64>:<route>',
-- 'email:<sha256>:<action>'), shared by every instance.
CREATE TABLE auth_rate_limits (
  bucket        text PRIMARY KEY CHECK (char_length(bucket) BETWEEN 1 AND 300),
  window_start  timestamptz NOT NULL,
  resets_at     timestamptz NOT NULL,
  hits          integer NOT NULL CHECK (hits > 0),
  CONSTRAINT auth_rate_limits_window CHECK (resets_at > window_start)
);
CREATE INDEX auth_rate_limits_resets_idx ON auth_rate_limits (resets_at);

CREATE FUNCTION rate_limit_hit(p_bucket text, p_limit integer, p_window_seconds integer, p_now timestamptz)
RETURNS TABLE (allowed boolean, hits integer, retry_after integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_hits integer;
  v_resets timestamptz;
BEGIN
  -- One statement counts the hit and starts a new window when the old one is over, so parallel
  -- requests on any instance see consecutive counts.
  INSERT INTO auth_rate_limits AS r (bucket, window_start, resets_at, hits)
  VALUES (p_bucket, p_now, p_now + make_interval(secs => p_window_seconds), 1)
  ON CONFLICT (bucket) DO UPDATE
     SET window_start = CASE WHEN r.resets_at <= p_now THEN p_now ELSE r.window_start END,
         resets_at = CASE WHEN r.resets_at <= p_now THEN p_now + make_interval(secs => p_window_seconds) ELSE r.resets_at END,
         hits = CASE WHEN r.resets_at <= p_now THEN 1 ELSE r.hits + 1 END
  RETURNING r.hits, r.resets_at INTO v_hits, v_resets;
  -- Now and then drop windows that ended long ago; SKIP LOCKED so sweepers never wait.
  IF random() < 0.02 THEN
    DELETE FROM auth_rate_limits WHERE bucket IN (
      SELECT o.bucket FROM auth_rate_limits o
       WHERE o.resets_at < p_now - interval '1 hour' AND o.bucket <> p_bucket
       LIMIT 500 FOR UPDATE SKIP LOCKED);
  END IF;
  allowed := v_hits <= p_limit;
  hits := v_hits;
  retry_after := greatest(1, ceil(extract(epoch FROM v_resets - p_now))::integer);
  RETURN NEXT;
END $$;
COMMENT ON FUNCTION rate_limit_hit(text, integer, integer, timestamptz) IS
  'Counts one hit on a bucket in its current fixed window (a new window starts when the old one ends) and says whether it is within p_limit, and in how many seconds the window ends.';

-- =============================================================================================
-- Sign-out and second factor (TOTP with recovery codes). Refusals: WA010 invalid_code (a wrong,
-- reused or out-of-state code), WA011 mfa_enabled (enrolling while a factor is active), WA012
-- not_pending (confirming without an open enrolment).

-- Rate-limit buckets of one subject ('login:<sha256 of the email>' and what hangs below it) are
-- found by prefix when a login or a reset clears them.
CREATE INDEX auth_rate_limits_bucket_prefix_idx ON auth_rate_limits (bucket text_pattern_ops);

CREATE FUNCTION rate_limit_clear(p_subject text) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_count integer;
BEGIN
  -- The subject's own bucket and every '<subject>:...' bucket; ';' is the character after ':'.
  DELETE FROM auth_rate_limits
   WHERE bucket ~>=~ p_subject AND bucket ~<~ (p_subject || ';');
  GET DIAGNOSTICS v_count = ROW_COUNT;
  RETURN v_count;
END $$;
COMMENT ON FUNCTION rate_limit_clear(text) IS
  'Forgets the counters of one subject: the bucket p_subject and every bucket p_subject:<anything> (for example an email''s per-address login counts).';

-- Signed-out sessions: a JWT id is refused until the token would have expired anyway.
CREATE TABLE session_revocations (
  jti         text PRIMARY KEY CHECK (jti ~ '^[0-9A-Za-z]{22}$'),
  account_id   text NOT NULL REFERENCES accounts (account_id) ON DELETE CASCADE,
  expires_at  timestamptz NOT NULL
);
CREATE INDEX session_revocations_expires_idx ON session_revocations (expires_at);

CREATE FUNCTION session_revoke(p_account_id text, p_jti text, p_expires_at timestamptz, p_now timestamptz)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  INSERT INTO session_revocations (jti, account_id, expires_at)
  VALUES (p_jti, p_account_id, p_expires_at)
  ON CONFLICT (jti) DO NOTHING;
  -- An expired JWT is refused by its own exp: its row is no longer needed.
  DELETE FROM session_revocations WHERE jti IN (
    SELECT r.jti FROM session_revocations r WHERE r.expires_at < p_now LIMIT 100 FOR UPDATE SKIP LOCKED);
END $$;
COMMENT ON FUNCTION session_revoke(text, text, timestamptz, timestamptz) IS
  'Signs one session out: its JWT id is refused on every instance until p_expires_at; rows of expired tokens are swept.';

-- A second-factor challenge (mfa_token) is single use: passing it records its jti here, in the
-- transaction that spends the code, so a second exchange of the same token finds it (WA006).
CREATE FUNCTION mfa_challenge_spend(p_account_id text, p_jti text, p_expires_at timestamptz) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  INSERT INTO session_revocations (jti, account_id, expires_at)
  VALUES (p_jti, p_account_id, p_expires_at)
  ON CONFLICT (jti) DO NOTHING;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'this sign-in challenge was already used' USING ERRCODE = 'WA006';
  END IF;
END $$;
COMMENT ON FUNCTION mfa_challenge_spend(text, text, timestamptz) IS
  'Marks an mfa_token used (by its jti, until it would have expired); WA006 when it already was: one challenge gives one session.';

-- One TOTP factor per account: pending (enrolled, not confirmed) -> active -> disabled; enrolling
-- again from pending or disabled starts over with a new secret. The secret is stored encrypted
-- by the service (docs/security.md); the database never sees it in the clear.
CREATE TABLE mfa_totp (
  account_id     text PRIMARY KEY REFERENCES accounts (account_id) ON DELETE CASCADE,
  status        text NOT NULL CHECK (status IN ('pending', 'active', 'disabled')),
  -- Sealed as src/crypto/secret-box.ts writes it: v1.<iv>.<ciphertext>, never a bare secret.
  secret_sealed text NOT NULL CHECK (secret_sealed ~ '^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$' AND char_length(secret_sealed) <= 500),
  -- The last 30 s step whose code was accepted: a code of that step or an earlier one is refused.
  last_step     bigint NOT NULL DEFAULT -1 CHECK (last_step >= -1),
  enrolled_at   timestamptz NOT NULL,
  confirmed_at  timestamptz,
  disabled_at   timestamptz,
  CONSTRAINT mfa_totp_times_match_status CHECK (
    (status = 'pending' AND confirmed_at IS NULL AND disabled_at IS NULL)
    OR (status = 'active' AND confirmed_at IS NOT NULL AND disabled_at IS NULL)
    OR (status = 'disabled' AND confirmed_at IS NOT NULL AND disabled_at IS NOT NULL))
);

-- Recovery codes: only their SHA-256; each works once.
CREATE TABLE mfa_recovery_codes (
  code_hash  text PRIMARY KEY CHECK (code_hash ~ '^[0-9a-f]{64}$'),
  account_id  text NOT NULL REFERENCES mfa_totp (account_id) ON DELETE CASCADE,
  used_at    timestamptz
);
CREATE INDEX mfa_recovery_codes_account_idx ON mfa_recovery_codes (account_id);

CREATE FUNCTION mfa_enroll(p_account_id text, p_secret_sealed text, p_now timestamptz) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_status text;
BEGIN
  SELECT status INTO v_status FROM mfa_totp WHERE account_id = p_account_id FOR UPDATE;
  IF v_status = 'active' THEN
    RAISE EXCEPTION 'a second factor is already active' USING ERRCODE = 'WA011';
  END IF;
  DELETE FROM mfa_totp WHERE account_id = p_account_id;
  INSERT INTO mfa_totp (account_id, status, secret_sealed, enrolled_at) VALUES (p_account_id, 'pending', p_secret_sealed, p_now);
END $$;
COMMENT ON FUNCTION mfa_enroll(text, text, timestamptz) IS
  'Starts a TOTP enrolment (pending, not yet asked at login) with a new sealed secret, replacing a pending or disabled one; WA011 while a factor is active.';

-- A factor's recovery codes become exactly these ten hashes (22023 for another count); the
-- callers below decide when (a confirm, a replacement).
CREATE FUNCTION mfa_recovery_codes_set(p_account_id text, p_recovery_hashes text[]) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF cardinality(p_recovery_hashes) <> 10 THEN
    RAISE EXCEPTION 'ten recovery codes expected' USING ERRCODE = '22023';
  END IF;
  DELETE FROM mfa_recovery_codes WHERE account_id = p_account_id;
  INSERT INTO mfa_recovery_codes (code_hash, account_id) SELECT h, p_account_id FROM unnest(p_recovery_hashes) AS h;
END $$;
COMMENT ON FUNCTION mfa_recovery_codes_set(text, text[]) IS
  'Makes a factor''s recovery codes exactly the ten given hashes (22023 otherwise); called by mfa_confirm() and mfa_recovery_codes_replace().';

CREATE FUNCTION mfa_confirm(p_account_id text, p_step bigint, p_recovery_hashes text[], p_now timestamptz) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE mfa_totp SET status = 'active', confirmed_at = p_now, last_step = p_step
   WHERE account_id = p_account_id AND status = 'pending';
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no pending enrolment' USING ERRCODE = 'WA012';
  END IF;
  PERFORM mfa_recovery_codes_set(p_account_id, p_recovery_hashes);
END $$;
COMMENT ON FUNCTION mfa_confirm(text, bigint, text[], timestamptz) IS
  'Activates a pending enrolment whose code (of step p_step, checked by the service) proved the secret, and stores the hashes of its ten recovery codes; WA012 when nothing is pending.';

CREATE FUNCTION mfa_accept_code(p_account_id text, p_step bigint, p_recovery_hash text, p_now timestamptz) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF p_step IS NOT NULL THEN
    -- Compare-and-set on the step: a code is accepted once, and never one of an earlier step.
    UPDATE mfa_totp SET last_step = p_step
     WHERE account_id = p_account_id AND status = 'active' AND last_step < p_step;
  ELSE
    UPDATE mfa_recovery_codes c SET used_at = p_now
      FROM mfa_totp m
     WHERE c.code_hash = p_recovery_hash AND c.account_id = p_account_id AND c.used_at IS NULL
       AND m.account_id = c.account_id AND m.status = 'active';
  END IF;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'second-factor code refused' USING ERRCODE = 'WA010';
  END IF;
END $$;
COMMENT ON FUNCTION mfa_accept_code(text, bigint, text, timestamptz) IS
  'Spends a second-factor code of an active factor: a TOTP step later than the last accepted one, or an unused recovery code (by hash); WA010 invalid_code otherwise.';

-- New recovery codes for an active factor: the ten given hashes replace every stored one, used or
-- not (a lost confirm answer, or codes used up or exposed). The service checks the password and a
-- code first.
CREATE FUNCTION mfa_recovery_codes_replace(p_account_id text, p_recovery_hashes text[]) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- The factor's row lock: a disable or another replacement at once waits, then finds its state.
  PERFORM 1 FROM mfa_totp WHERE account_id = p_account_id AND status = 'active' FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no active second factor' USING ERRCODE = 'WA010';
  END IF;
  PERFORM mfa_recovery_codes_set(p_account_id, p_recovery_hashes);
END $$;
COMMENT ON FUNCTION mfa_recovery_codes_replace(text, text[]) IS
  'Replaces every recovery code of an active factor with ten new hashes; WA010 when none is active. The service checks the password and a code first.';

CREATE FUNCTION mfa_disable(p_account_id text, p_now timestamptz) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE mfa_totp SET status = 'disabled', disabled_at = p_now WHERE account_id = p_account_id AND status = 'active';
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no active second factor' USING ERRCODE = 'WA010';
  END IF;
  DELETE FROM mfa_recovery_codes WHERE account_id = p_account_id;
END $$;
COMMENT ON FUNCTION mfa_disable(text, timestamptz) IS
  'Turns an active factor off (its recovery codes are deleted); WA010 when none is active. The service checks the password and a code first.';
