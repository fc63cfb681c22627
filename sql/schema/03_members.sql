-- Members: the people of a tenant, each with one role, and the invitations that bring them in
-- (docs/api.md, "Teams"). The role rules and the member state machine live here, so that neither
-- a code path nor an operator can leave a tenant without an owner or let an admin touch an owner.
-- A member's removal, which may revoke their keys, comes after the keys: 05_members_and_keys.sql.
-- Refusals raise class WT (docs/error_codes.md):
--   WT001 no such member or invitation in this tenant     WT002 never done (delete, revive, rename)
--   WT020 .. WT023 the actor's role may not do this: it needs owner, admin, developer, approver
--   WT003 the last owner would go                         WT004 the tenant has the most members
--   WT005 the most pending invitations                    WT006 the person is already a member
--   WT007 the invitation is not pending                   WT008 the invitation is for another email
--   WT009 a new person's email already has an account (made meanwhile: accept with its password)
--   WT010 the acting member was removed while their request ran (member_hold())

-- Ranked from the widest to the narrowest: a route that needs a role admits every role ranked above it.
CREATE FUNCTION member_role_rank(p_role text) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE p_role WHEN 'owner' THEN 5 WHEN 'admin' THEN 4 WHEN 'developer' THEN 3 WHEN 'approver' THEN 2 WHEN 'viewer' THEN 1 END
$$;
COMMENT ON FUNCTION member_role_rank(text) IS
  'owner 5 > admin 4 > developer 3 > approver 2 > viewer 1; NULL for anything else.';

CREATE TABLE members (
  member_id       text NOT NULL CHECK (member_id ~ '^mbr_[0-9A-Za-z]{22}$'),
  tenant_id       text NOT NULL REFERENCES tenants (tenant_id),
  account_id      text NOT NULL REFERENCES accounts (account_id),
  role            text NOT NULL CHECK (member_role_rank(role) IS NOT NULL),
  -- active -> removed, and removed is final: a person who comes back is a new member.
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removed')),
  -- Bumped on a role change (and by an operator's sign-out): the member's sessions of this tenant end.
  session_epoch   integer NOT NULL DEFAULT 0 CHECK (session_epoch >= 0),
  joined_at       timestamptz NOT NULL,
  removed_at      timestamptz,
  removed_by      text,
  -- Keyed by tenant first, as every tenant table (docs/scaling.md): the tenant's own tables name a
  -- member by (tenant_id, member_id).
  PRIMARY KEY (tenant_id, member_id),
  CONSTRAINT members_removed_by_fkey FOREIGN KEY (tenant_id, removed_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT members_removed_at_matches_status CHECK ((status = 'removed') = (removed_at IS NOT NULL))
);
CREATE UNIQUE INDEX members_one_active_per_person ON members (tenant_id, account_id) WHERE status = 'active';

-- A person's active memberships, by account: where a login or a tenant switch finds the tenants
-- to read (a person spans tenants, so members alone would be searched in every tenant's part;
-- docs/scaling.md). Written only by member_route_add() as members join, and member_remove() as they leave.
CREATE TABLE member_routes (
  account_id  text NOT NULL REFERENCES accounts (account_id),
  tenant_id   text NOT NULL,
  member_id   text NOT NULL,
  joined_at   timestamptz NOT NULL,
  PRIMARY KEY (account_id, tenant_id)
);

-- Written by the procedures that add and remove members, in their transaction (tenant_signup(),
-- member_invitation_accept(), member_remove()), not by a trigger: distributed by tenant (docs/scaling.md), a
-- trigger on members runs on the tenant's shard, where it may write no other table.
CREATE FUNCTION member_route_add(p_account_id text, p_tenant_id text, p_member_id text, p_joined_at timestamptz) RETURNS void
LANGUAGE sql VOLATILE AS $$
  INSERT INTO member_routes (account_id, tenant_id, member_id, joined_at) VALUES (p_account_id, p_tenant_id, p_member_id, p_joined_at)
$$;
COMMENT ON FUNCTION member_route_add(text, text, text, timestamptz) IS
  'Routes a member who joins (member_routes: account -> tenant, member). Called by every procedure that inserts a member.';

CREATE FUNCTION members_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 100 $$;
COMMENT ON FUNCTION members_cap() IS 'At most this many active members per tenant (429 quota_exceeded, limit "members").';

CREATE FUNCTION members_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'members are never deleted; remove them' USING ERRCODE = 'WT002';
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.status <> 'active' THEN
      RAISE EXCEPTION 'a member joins active' USING ERRCODE = 'WT002';
    END IF;
    -- Caps are checked under the tenant's row lock, so concurrent joins cannot pass them together.
    -- NO KEY UPDATE, as every member rule locks the tenant: it does not wait on (nor hold up) the
    -- foreign-key checks of a receipt append, which holds the receipt head an audit event waits for.
    PERFORM 1 FROM tenants t WHERE t.tenant_id = NEW.tenant_id FOR NO KEY UPDATE;
    IF (SELECT count(*) FROM members m WHERE m.tenant_id = NEW.tenant_id AND m.status = 'active') >= members_cap() THEN
      RAISE EXCEPTION 'the tenant has % members', members_cap() USING ERRCODE = 'WT004';
    END IF;
    RETURN NEW;
  END IF;
  IF NEW.member_id <> OLD.member_id OR NEW.tenant_id <> OLD.tenant_id OR NEW.account_id <> OLD.account_id OR NEW.joined_at <> OLD.joined_at THEN
    RAISE EXCEPTION 'a member''s identity never changes' USING ERRCODE = 'WT002';
  END IF;
  IF OLD.status = 'removed' AND (NEW.status <> 'removed' OR NEW.role <> OLD.role) THEN
    RAISE EXCEPTION 'a removed member stays removed' USING ERRCODE = 'WT001';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION members_guard() IS
  'Members are never deleted (WT002), join active under the tenant''s cap (WT004, tenant row locked), keep their identity, and a removed member changes no more (WT001).';
CREATE TRIGGER members_guard BEFORE INSERT OR UPDATE OR DELETE ON members
  FOR EACH ROW EXECUTE FUNCTION members_guard();

-- There is always an owner. The check runs after the row changed, under the tenant's row lock: two
-- owners demoting each other at once take turns, and the second finds the first already gone.
CREATE FUNCTION members_keep_an_owner() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF OLD.role = 'owner' AND OLD.status = 'active' AND (NEW.role <> 'owner' OR NEW.status <> 'active') THEN
    PERFORM 1 FROM tenants t WHERE t.tenant_id = NEW.tenant_id FOR NO KEY UPDATE;
    IF NOT EXISTS (SELECT 1 FROM members m WHERE m.tenant_id = NEW.tenant_id AND m.role = 'owner' AND m.status = 'active') THEN
      RAISE EXCEPTION 'the last owner cannot leave or be demoted' USING ERRCODE = 'WT003';
    END IF;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION members_keep_an_owner() IS
  'AFTER UPDATE: a tenant keeps at least one active owner (WT003 last_owner), checked under the tenant''s row lock.';
CREATE TRIGGER members_keep_an_owner AFTER UPDATE ON members
  FOR EACH ROW EXECUTE FUNCTION members_keep_an_owner();

CREATE FUNCTION member_role_refusal(p_role text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT CASE p_role WHEN 'owner' THEN 'WT020' WHEN 'admin' THEN 'WT021' WHEN 'developer' THEN 'WT022' ELSE 'WT023' END
$$;
COMMENT ON FUNCTION member_role_refusal(text) IS
  'The SQLSTATE that refuses an actor short of p_role: WT020 owner, WT021 admin, WT022 developer, WT023 approver (403 forbidden_role with required_role).';

-- The acting member, active in the tenant, with at least p_role; WT002 otherwise (WT001 when the
-- actor is no member of it at all). NULL actor: an operator, who may do anything.
CREATE FUNCTION member_actor_check(p_tenant_id text, p_actor text, p_role text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_role text;
BEGIN
  IF p_actor IS NULL THEN
    RETURN 'owner';
  END IF;
  SELECT m.role INTO v_role FROM members m WHERE m.member_id = p_actor AND m.tenant_id = p_tenant_id AND m.status = 'active';
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no such member' USING ERRCODE = 'WT001';
  END IF;
  IF member_role_rank(v_role) < member_role_rank(p_role) THEN
    RAISE EXCEPTION 'this needs the role %', p_role USING ERRCODE = member_role_refusal(p_role);
  END IF;
  RETURN v_role;
END $$;
COMMENT ON FUNCTION member_actor_check(text, text, text) IS
  'The actor''s role when it is an active member of the tenant ranked at least p_role (NULL actor: an operator, owner); WT001 not a member, WT020..WT023 (the role needed) otherwise.';

-- A member who makes something that is theirs (a key) holds their own row for the transaction
-- (FOR SHARE): a removal, which locks the row FOR UPDATE, waits for it and then sees what was made
-- (and revokes it with revoke_keys); one that comes after the removal finds them gone (WT010).
CREATE FUNCTION member_hold(p_tenant_id text, p_member_id text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF p_member_id IS NULL THEN
    RETURN; -- an operator
  END IF;
  PERFORM 1 FROM members m WHERE m.tenant_id = p_tenant_id AND m.member_id = p_member_id AND m.status = 'active' FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'the member was removed' USING ERRCODE = 'WT010';
  END IF;
END $$;
COMMENT ON FUNCTION member_hold(text, text) IS
  'Locks an active member''s row FOR SHARE until the transaction ends, so that their removal waits for what they make; WT010 when they are no active member (removed meanwhile). NULL: an operator, nothing to hold.';

CREATE FUNCTION member_set_role(p_tenant_id text, p_actor text, p_member_id text, p_role text)
RETURNS TABLE (member_id text, role text, old_role text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_actor_role text;
  v_old text;
BEGIN
  v_actor_role := member_actor_check(p_tenant_id, p_actor, 'admin');
  SELECT m.role INTO v_old FROM members m
   WHERE m.member_id = p_member_id AND m.tenant_id = p_tenant_id AND m.status = 'active' FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no such member' USING ERRCODE = 'WT001';
  END IF;
  IF member_role_rank(p_role) IS NULL THEN
    RAISE EXCEPTION 'unknown role %', p_role USING ERRCODE = '22023';
  END IF;
  -- Owners are an owner's business: making one, or changing one.
  IF (v_old = 'owner' OR p_role = 'owner') AND v_actor_role <> 'owner' THEN
    RAISE EXCEPTION 'only an owner changes owners' USING ERRCODE = member_role_refusal('owner');
  END IF;
  IF v_old <> p_role THEN
    UPDATE members m SET role = p_role, session_epoch = m.session_epoch + 1 WHERE m.tenant_id = p_tenant_id AND m.member_id = p_member_id;
  END IF;
  RETURN QUERY SELECT p_member_id, p_role, v_old;
END $$;
COMMENT ON FUNCTION member_set_role(text, text, text, text) IS
  'An admin (an owner, for owners and for making one) gives a member another role; the member''s sessions of the tenant end. '
  'WT001 unknown member, WT02x actor''s role, WT003 the last owner, 22023 unknown role.';

-- Signs a customer out everywhere for an operator (`warden ops sessions end`,
-- sql/ops/sessions_end.sql): every member's sessions of that tenant end (their sessions of other
-- tenants are not this tenant's to end). Unlike the customer's own sign-out, it names an unknown tenant.
-- p_by: the operator, for the audit trail (NULL: "operator"). Refused as accounts' are (WA005).
CREATE FUNCTION tenant_sessions_end(p_tenant_id text, p_by text DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_count integer;
BEGIN
  PERFORM 1 FROM tenants WHERE tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no tenant %', p_tenant_id USING ERRCODE = 'WA005';
  END IF;
  UPDATE members SET session_epoch = session_epoch + 1 WHERE tenant_id = p_tenant_id AND status = 'active';
  GET DIAGNOSTICS v_count = ROW_COUNT;
  PERFORM audit_operator_event(p_tenant_id, 'sessions.ended', p_by, jsonb_build_object('members', v_count));
  RETURN v_count;
END $$;
COMMENT ON FUNCTION tenant_sessions_end(text, text) IS
  'Ends every session of a tenant at once (each active member''s session epoch + 1: every JWT of the tenant issued before stops working; API keys are untouched) '
  'and queues the audit event sessions.ended; WA005 when there is no such tenant. Returns how many members were signed out.';

-- Where mail about the tenant as a whole goes (an upgrade's review): its oldest active owner.
CREATE FUNCTION tenant_contact_email(p_tenant_id text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  -- PL/pgSQL rather than SQL, as member_session().
  RETURN (SELECT a.email FROM members m JOIN accounts a ON a.account_id = m.account_id
           WHERE m.tenant_id = p_tenant_id AND m.role = 'owner' AND m.status = 'active'
           ORDER BY m.joined_at, m.member_id LIMIT 1);
END $$;
COMMENT ON FUNCTION tenant_contact_email(text) IS 'The email of the tenant''s oldest active owner: where mail about the tenant as a whole goes.';

-- ---------------------------------------------------------------------------------------------
-- Invitations: pending -> accepted | revoked; a pending one past expires_at is expired (it is
-- shown so, and refused). Only the token's SHA-256 is kept, and it is unique across tenants through
-- invitation_routes (below), where an acceptance finds its tenant.
CREATE TABLE member_invitations (
  invitation_id  text NOT NULL CHECK (invitation_id ~ '^inv_[0-9A-Za-z]{22}$'),
  tenant_id      text NOT NULL REFERENCES tenants (tenant_id),
  email          text NOT NULL CHECK (email = lower(btrim(email)) AND length(email) BETWEEN 3 AND 254),
  role           text NOT NULL CHECK (member_role_rank(role) IS NOT NULL),
  token_hash     text NOT NULL CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'revoked')),
  invited_by     text,
  created_at     timestamptz NOT NULL,
  expires_at     timestamptz NOT NULL,
  finished_at    timestamptz,
  member_id      text,
  PRIMARY KEY (tenant_id, invitation_id),
  CONSTRAINT member_invitations_invited_by_fkey FOREIGN KEY (tenant_id, invited_by) REFERENCES members (tenant_id, member_id),
  CONSTRAINT member_invitations_member_id_fkey FOREIGN KEY (tenant_id, member_id) REFERENCES members (tenant_id, member_id),
  CONSTRAINT member_invitations_lifetime CHECK (expires_at > created_at),
  CONSTRAINT member_invitations_finished_at_matches_status CHECK ((status = 'pending') = (finished_at IS NULL)),
  CONSTRAINT member_invitations_member_when_accepted CHECK ((status = 'accepted') = (member_id IS NOT NULL))
);
CREATE INDEX member_invitations_tenant_idx ON member_invitations (tenant_id, created_at DESC);

-- An invitation's token hash -> its tenant and invitation: the link carries no tenant, so an
-- acceptance reads here first (docs/scaling.md). The primary key keeps token hashes unique.
-- Written only by member_invite(), with the invitation; invitations are never deleted and their token
-- never changes, so a route never changes either.
CREATE TABLE invitation_routes (
  token_hash     text PRIMARY KEY,
  tenant_id      text NOT NULL,
  invitation_id  text NOT NULL
);


CREATE FUNCTION member_invitations_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF TG_OP = 'DELETE' OR OLD.status <> 'pending' OR NEW.status = 'pending'
     OR NEW.invitation_id <> OLD.invitation_id OR NEW.tenant_id <> OLD.tenant_id OR NEW.email <> OLD.email
     OR NEW.role <> OLD.role OR NEW.token_hash <> OLD.token_hash OR NEW.expires_at <> OLD.expires_at THEN
    RAISE EXCEPTION 'an invitation only goes from pending to accepted or revoked, once' USING ERRCODE = 'WT007';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION member_invitations_guard() IS
  'An invitation changes once, from pending to accepted or revoked, and nothing else of it changes; never deleted (WT007).';
CREATE TRIGGER member_invitations_guard BEFORE UPDATE OR DELETE ON member_invitations
  FOR EACH ROW EXECUTE FUNCTION member_invitations_guard();

CREATE FUNCTION member_invitations_cap() RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT 100 $$;
COMMENT ON FUNCTION member_invitations_cap() IS 'At most this many pending, unexpired invitations per tenant (429 quota_exceeded, limit "invitations_pending").';

CREATE FUNCTION member_invitation_status(p_status text, p_expires_at timestamptz, p_now timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_status = 'pending' AND p_expires_at <= p_now THEN 'expired' ELSE p_status END
$$;
COMMENT ON FUNCTION member_invitation_status(text, timestamptz, timestamptz) IS
  'What an invitation shows: pending, accepted, revoked, or expired (pending past its expiry).';

-- p_token_sealed: the token sealed by the service for the mail (as for email verification).
CREATE FUNCTION member_invite(p_invitation_id text, p_tenant_id text, p_actor text, p_email text, p_role text,
                              p_token text, p_token_sealed text, p_public_data jsonb, p_now timestamptz)
RETURNS TABLE (invitation_id text, email text, role text, created_at text, expires_at text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_actor_role text;
  v_expires timestamptz := p_now + interval '7 days';
  v_token_hash text := auth_token_digest(p_token);
BEGIN
  v_actor_role := member_actor_check(p_tenant_id, p_actor, 'admin');
  IF member_role_rank(p_role) IS NULL THEN
    RAISE EXCEPTION 'unknown role %', p_role USING ERRCODE = '22023';
  END IF;
  IF p_role = 'owner' AND v_actor_role <> 'owner' THEN
    RAISE EXCEPTION 'only an owner invites an owner' USING ERRCODE = member_role_refusal('owner');
  END IF;
  PERFORM 1 FROM tenants t WHERE t.tenant_id = p_tenant_id FOR NO KEY UPDATE;
  IF EXISTS (SELECT 1 FROM members m JOIN accounts a ON a.account_id = m.account_id
              WHERE m.tenant_id = p_tenant_id AND m.status = 'active' AND a.email = p_email) THEN
    RAISE EXCEPTION 'already a member' USING ERRCODE = 'WT006';
  END IF;
  -- Inviting the same address again replaces its pending invitation (a new link, a new week).
  UPDATE member_invitations i SET status = 'revoked', finished_at = p_now
   WHERE i.tenant_id = p_tenant_id AND i.email = p_email AND i.status = 'pending';
  IF (SELECT count(*) FROM member_invitations i
       WHERE i.tenant_id = p_tenant_id AND i.status = 'pending' AND i.expires_at > p_now) >= member_invitations_cap() THEN
    RAISE EXCEPTION 'the tenant has % pending invitations', member_invitations_cap() USING ERRCODE = 'WT005';
  END IF;
  INSERT INTO member_invitations (invitation_id, tenant_id, email, role, token_hash, invited_by, created_at, expires_at)
  VALUES (p_invitation_id, p_tenant_id, p_email, p_role, v_token_hash, p_actor, p_now, v_expires);
  -- Its route, here rather than by a trigger on member_invitations (docs/scaling.md); a token hash used twice is 23505.
  INSERT INTO invitation_routes (token_hash, tenant_id, invitation_id) VALUES (v_token_hash, p_tenant_id, p_invitation_id);
  PERFORM mail_enqueue('member_invitation', p_email, p_tenant_id,
                       coalesce(p_public_data, '{}'::jsonb) || jsonb_build_object('token_sealed', p_token_sealed, 'role', p_role));
  RETURN QUERY SELECT p_invitation_id, p_email, p_role, iso_time(p_now), iso_time(v_expires);
END $$;
COMMENT ON FUNCTION member_invite(text, text, text, text, text, text, text, jsonb, timestamptz) IS
  'An admin (an owner, to invite an owner) invites an email with a role for 7 days and queues its email; an earlier pending invitation '
  'of the same email is revoked. WT02x actor''s role, WT005 cap, WT006 already a member, 22023 unknown role.';

CREATE FUNCTION member_invitation_revoke(p_tenant_id text, p_actor text, p_invitation_id text, p_now timestamptz)
RETURNS TABLE (invitation_id text, email text, role text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v member_invitations%ROWTYPE;
BEGIN
  PERFORM member_actor_check(p_tenant_id, p_actor, 'admin');
  SELECT * INTO v FROM member_invitations i WHERE i.invitation_id = p_invitation_id AND i.tenant_id = p_tenant_id FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no such invitation' USING ERRCODE = 'WT001';
  END IF;
  IF v.status <> 'pending' OR v.expires_at <= p_now THEN
    RAISE EXCEPTION 'the invitation is not pending' USING ERRCODE = 'WT007';
  END IF;
  UPDATE member_invitations i SET status = 'revoked', finished_at = p_now WHERE i.tenant_id = p_tenant_id AND i.invitation_id = p_invitation_id;
  RETURN QUERY SELECT v.invitation_id, v.email, v.role;
END $$;
COMMENT ON FUNCTION member_invitation_revoke(text, text, text, timestamptz) IS
  'An admin revokes a pending invitation: its link stops working. WT001 unknown, WT02x actor''s role, WT007 not pending.';

-- The invitation a link names, for both who read one (member_invitation_invitee(), to show it, and
-- member_invitation_accept()): its route first, then the invitation in its tenant (on a distributed
-- cluster a statement names its tenant; docs/scaling.md), refused unless it is pending, as
-- auth_token_take() refuses a token. It takes no lock: the acceptance locks the row and reads again.
CREATE FUNCTION member_invitation_open(p_token text, p_now timestamptz) RETURNS member_invitations
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v member_invitations%ROWTYPE;
BEGIN
  SELECT r.tenant_id, r.invitation_id INTO v.tenant_id, v.invitation_id FROM invitation_routes r WHERE r.token_hash = auth_token_digest(p_token);
  SELECT i.* INTO v FROM member_invitations i WHERE i.tenant_id = v.tenant_id AND i.invitation_id = v.invitation_id;
  IF NOT FOUND OR v.status = 'revoked' THEN
    RAISE EXCEPTION 'invalid invitation' USING ERRCODE = 'WA001';
  ELSIF v.status = 'accepted' THEN
    RAISE EXCEPTION 'invitation already used' USING ERRCODE = 'WA003';
  ELSIF v.expires_at <= p_now THEN
    RAISE EXCEPTION 'invitation expired' USING ERRCODE = 'WA002';
  END IF;
  RETURN v;
END $$;
COMMENT ON FUNCTION member_invitation_open(text, timestamptz) IS
  'The pending invitation a link''s token names, read through its route without a lock. WA001 unknown or revoked, WA002 expired, WA003 used.';

-- Accepting: as the person signed in (p_account_id, whose email must be the invitation's), or as
-- a new person (p_account_id NULL): an account with the invitation's email, verified by the link,
-- and p_password_hash. The row lock makes a second, parallel acceptance wait and then find it used.
CREATE FUNCTION member_invitation_accept(p_token text, p_account_id text, p_new_account_id text, p_password_hash text,
                                         p_member_id text, p_now timestamptz)
RETURNS TABLE (tenant_id text, member_id text, account_id text, role text, email text, invitation_id text, new_account boolean)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v member_invitations%ROWTYPE;
  v_account text := p_account_id;
  v_email text;
BEGIN
  -- Found and refused as the invitee read does, then locked in its tenant (a locking read names its
  -- tenant; docs/scaling.md) and read again by a statement that starts after the lock: a parallel
  -- acceptance that held it has committed by then, and this one finds the invitation used.
  v := member_invitation_open(p_token, p_now);
  PERFORM 1 FROM member_invitations i WHERE i.tenant_id = v.tenant_id AND i.invitation_id = v.invitation_id FOR UPDATE;
  v := member_invitation_open(p_token, p_now);
  IF v_account IS NULL THEN
    IF EXISTS (SELECT 1 FROM accounts a WHERE a.email = v.email) THEN
      RAISE EXCEPTION 'this email has an account: log in and accept' USING ERRCODE = 'WT009';
    END IF;
    -- ON CONFLICT: an account made for the email meanwhile is the same refusal, not a bare 23505.
    INSERT INTO accounts (account_id, email, password_hash, email_verified_at, last_tenant_id, created_at)
    VALUES (p_new_account_id, v.email, p_password_hash, p_now, v.tenant_id, p_now)
    ON CONFLICT (email) DO NOTHING;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'this email has an account: log in and accept' USING ERRCODE = 'WT009';
    END IF;
    v_account := p_new_account_id;
  ELSE
    SELECT a.email INTO v_email FROM accounts a WHERE a.account_id = v_account FOR UPDATE;
    IF v_email IS DISTINCT FROM v.email THEN
      RAISE EXCEPTION 'the invitation is for another email' USING ERRCODE = 'WT008';
    END IF;
    -- The link reached this address, which proves it as well as a verification would.
    UPDATE accounts a SET email_verified_at = coalesce(a.email_verified_at, p_now), last_tenant_id = v.tenant_id
     WHERE a.account_id = v_account;
  END IF;
  IF EXISTS (SELECT 1 FROM members m WHERE m.tenant_id = v.tenant_id AND m.account_id = v_account AND m.status = 'active') THEN
    RAISE EXCEPTION 'already a member' USING ERRCODE = 'WT006';
  END IF;
  INSERT INTO members (member_id, tenant_id, account_id, role, joined_at) VALUES (p_member_id, v.tenant_id, v_account, v.role, p_now);
  PERFORM member_route_add(v_account, v.tenant_id, p_member_id, p_now);
  UPDATE member_invitations i SET status = 'accepted', finished_at = p_now, member_id = p_member_id
   WHERE i.tenant_id = v.tenant_id AND i.invitation_id = v.invitation_id;
  RETURN QUERY SELECT v.tenant_id, p_member_id, v_account, v.role, v.email, v.invitation_id, p_account_id IS NULL;
END $$;
COMMENT ON FUNCTION member_invitation_accept(text, text, text, text, text, timestamptz) IS
  'Redeems an invitation once: the signed-in person (same email, WT008 otherwise) or a new person (WT009 when the email has an account) '
  'becomes a member with its role. WA001 unknown or revoked, WA002 expired, WA003 used, WT004 cap, WT006 already a member.';

-- Whom an invitation is for, read before it is accepted: its email and role, and the account that
-- email already has (NULL: none), with what proves it (its password hash, whether it has a second
-- factor). A person who has an account but no session (removed from their only tenant, they cannot
-- log in) then accepts with their own password (docs/api.md, "Teams"). Refuses as the acceptance does.
CREATE FUNCTION member_invitation_invitee(p_token text, p_now timestamptz)
RETURNS TABLE (invitation_id text, tenant_id text, email text, role text, expires_at text,
               account_id text, password_hash text, mfa_active boolean)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
  v member_invitations%ROWTYPE;
BEGIN
  v := member_invitation_open(p_token, p_now);
  RETURN QUERY
    SELECT v.invitation_id, v.tenant_id, v.email, v.role, iso_time(v.expires_at), a.account_id, a.password_hash,
           EXISTS (SELECT 1 FROM mfa_totp f WHERE f.account_id = a.account_id AND f.status = 'active')
      FROM (SELECT 1) one LEFT JOIN accounts a ON a.email = v.email;
END $$;
COMMENT ON FUNCTION member_invitation_invitee(text, timestamptz) IS
  'A pending invitation''s email, role and expiry, and the account its email has (NULL account_id: none) with its password hash '
  'and whether it has a second factor. WA001 unknown or revoked, WA002 expired, WA003 used.';

-- ---------------------------------------------------------------------------------------------
-- The session behind a JWT: the member of the tenant, the person, and what the tokens must carry.
CREATE FUNCTION member_session(p_tenant_id text, p_member_id text, p_account_id text, p_jti text)
RETURNS TABLE (tenant_id text, plan text, member_id text, account_id text, role text, member_epoch integer,
               account_epoch integer, signed_out boolean, mfa_active boolean, require_mfa boolean)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
  -- PL/pgSQL rather than SQL: a distributed cluster plans a statement of a PL/pgSQL function as
  -- one tenant's query, and refuses a SQL function's parameters (docs/scaling.md).
  RETURN QUERY
  SELECT m.tenant_id, t.plan, m.member_id, a.account_id, m.role, m.session_epoch, a.session_epoch,
         EXISTS (SELECT 1 FROM session_revocations r WHERE r.jti = p_jti),
         EXISTS (SELECT 1 FROM mfa_totp f WHERE f.account_id = a.account_id AND f.status = 'active'),
         t.require_mfa
    FROM members m
    JOIN accounts a ON a.account_id = m.account_id
    JOIN tenants t ON t.tenant_id = m.tenant_id
   WHERE m.tenant_id = p_tenant_id AND m.member_id = p_member_id AND m.account_id = p_account_id AND m.status = 'active';
END $$;
COMMENT ON FUNCTION member_session(text, text, text, text) IS
  'The live member behind a session (no row: removed, or not this person''s), its role, the epochs its tokens must carry, whether this token '
  'was signed out, whether the person has a second factor, and whether the tenant requires one.';

-- The membership a person's session opens in: p_tenant_id when named (a switch), else the tenant of
-- their last session while they are still a member there, else their oldest membership.
CREATE FUNCTION member_for_session(p_account_id text, p_tenant_id text)
RETURNS TABLE (tenant_id text, member_id text, role text, member_epoch integer)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  -- The person's memberships found through their routes, each read in its tenant.
  RETURN QUERY
    SELECT m.tenant_id, m.member_id, m.role, m.session_epoch
      FROM member_routes r
      JOIN accounts a ON a.account_id = r.account_id
      JOIN members m ON m.tenant_id = r.tenant_id AND m.member_id = r.member_id
     WHERE r.account_id = p_account_id AND m.status = 'active' AND (p_tenant_id IS NULL OR r.tenant_id = p_tenant_id)
     ORDER BY (r.tenant_id = a.last_tenant_id) DESC NULLS LAST, r.joined_at, r.member_id
     LIMIT 1;
  IF FOUND AND p_tenant_id IS NOT NULL THEN
    UPDATE accounts a SET last_tenant_id = p_tenant_id WHERE a.account_id = p_account_id AND a.last_tenant_id IS DISTINCT FROM p_tenant_id;
  END IF;
END $$;
COMMENT ON FUNCTION member_for_session(text, text) IS
  'The active membership a new session of the person is of: the named tenant (remembered as the last one), or the last one used, or the oldest; no row: none.';
