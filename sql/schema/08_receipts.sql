-- The receipt log (docs/api.md, Receipts and the receipt log): each tenant's decisions and audit events (docs/api.md,
-- "The audit trail") as a hash chain, the keys that sign them, and the daily usage the plans'
-- quotas count. Custom SQLSTATEs (docs/error_codes.md):
--   WR001 receipts and heads are append-only   WR005 inserted rows do not continue the chain
--   WR008 no such signing key   WR009 a compromise mark set in the future, lifted or moved later
-- and, as refusal codes answered by receipt_append() per item (nothing raised):
--   WR002 no such protect receipt   WR003 protect decision DENIED   WR004 protect receipt too old
--   WR007 protect receipt already executed   WQ001 protect_per_day   WQ002 execute_per_day
--   WQ003 receipts_stored

-- Ed25519 keys that sign receipts. At most one is active; retired keys stay published in the JWKS
-- so every receipt ever signed remains verifiable. A key marked compromised_since is published with
-- that mark, and verifiers refuse its signatures of that instant or later.
CREATE TABLE signing_keys (
  kid                text PRIMARY KEY,
  public_jwk         jsonb NOT NULL,
  -- The private JWK, sealed by the service (src/crypto/secret-box.ts): never stored in the clear.
  private_sealed     text NOT NULL CONSTRAINT signing_keys_private_sealed CHECK (private_sealed ~ '^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$'),
  status             text NOT NULL CHECK (status IN ('active', 'retired')),
  created_at         timestamptz NOT NULL DEFAULT now(),
  retired_at         timestamptz,
  compromised_since  timestamptz,
  CONSTRAINT signing_keys_retired_at_matches_status CHECK ((status = 'retired') = (retired_at IS NOT NULL)),
  CONSTRAINT signing_keys_compromised_not_active CHECK (compromised_since IS NULL OR status = 'retired')
);
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys ((true)) WHERE status = 'active';

CREATE FUNCTION signing_keys_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF OLD.compromised_since IS NOT NULL AND (NEW.compromised_since IS NULL OR NEW.compromised_since > OLD.compromised_since) THEN
    RAISE EXCEPTION 'signing key % is compromised since %; the mark is never lifted or moved later', OLD.kid, iso_time(OLD.compromised_since)
      USING ERRCODE = 'WR009';
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION signing_keys_guard() IS
  'A signing key''s compromise mark is never lifted nor moved later (WR009): that would make forged signatures verify again.';
CREATE TRIGGER signing_keys_guard BEFORE UPDATE ON signing_keys
  FOR EACH ROW EXECUTE FUNCTION signing_keys_guard();

CREATE FUNCTION signing_key_rotate(p_kid text, p_public jsonb, p_private_sealed text) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE signing_keys SET status = 'retired', retired_at = now() WHERE status = 'active';
  INSERT INTO signing_keys (kid, public_jwk, private_sealed, status) VALUES (p_kid, p_public, p_private_sealed, 'active');
  RETURN p_kid;
END $$;
COMMENT ON FUNCTION signing_key_rotate(text, jsonb, text) IS
  'Retires the active receipt signing key and activates a new one in one step; old public keys stay in the JWKS.';

CREATE FUNCTION signing_key_revoke(p_kid text, p_compromised_since timestamptz)
RETURNS TABLE (kid text, status text, retired_at text, compromised_since text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  -- Milliseconds, as every signed timestamp is written: truncating only moves the mark earlier.
  v_since timestamptz := date_trunc('milliseconds', p_compromised_since);
  -- A variable, not now() in the COALESCE below, which a distributed cluster refuses (docs/scaling.md).
  v_now timestamptz := now();
BEGIN
  IF v_since IS NULL OR v_since > v_now THEN
    RAISE EXCEPTION 'compromised_since must be a time not in the future' USING ERRCODE = 'WR009';
  END IF;
  -- The active key stops being active here; the service makes a new one when it next loads its key.
  UPDATE signing_keys k
  SET status = 'retired',
      retired_at = coalesce(k.retired_at, v_now),
      compromised_since = least(k.compromised_since, v_since)
  WHERE k.kid = p_kid;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no signing key %', p_kid USING ERRCODE = 'WR008';
  END IF;
  RETURN QUERY SELECT k.kid, k.status, iso_time(k.retired_at), iso_time(k.compromised_since) FROM signing_keys k WHERE k.kid = p_kid;
END $$;
COMMENT ON FUNCTION signing_key_revoke(text, timestamptz) IS
  'Marks a receipt signing key compromised since a time not in the future (WR009 otherwise; unknown kid WR008): the JWKS publishes '
  'the mark and verifiers refuse the key''s signatures of that instant or later. An active key is retired at once (no key is then '
  'active: the service creates a new one when it next loads its key); a mark only ever moves earlier (the earlier time wins).';

-- chain_hash (docs/api.md, Receipts and the receipt log): SHA-256 of the JCS text of the receipt claims plus prev and seq,
-- {v: 2, receipt_id, tenant_id, key_id, kind, request_id, timestamp, content_hash, protect_receipt_id, prev, seq}.
-- JCS sorts the keys (content_hash, key_id, kind, prev, protect_receipt_id, receipt_id, request_id,
-- seq, tenant_id, timestamp, v) and escapes strings as JSON does; every string here is an id, hex,
-- ISO time or a visible-ASCII request id (the receipts CHECK), for which to_json() escapes exactly
-- as JCS does (`"` and `\` included). src/receipts/chain.ts computes the same in TypeScript; a test
-- checks they agree.
CREATE FUNCTION receipt_chain_hash(p_receipt_id text, p_tenant_id text, p_key_id text, p_kind text, p_request_id text,
                                   p_timestamp text, p_content_hash text, p_protect_receipt_id text, p_prev text, p_seq bigint)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT sha256_hex(
    '{"content_hash":' || to_json(p_content_hash)::text ||
    ',"key_id":' || coalesce(to_json(p_key_id)::text, 'null') ||
    ',"kind":' || to_json(p_kind)::text ||
    ',"prev":' || coalesce(to_json(p_prev)::text, 'null') ||
    ',"protect_receipt_id":' || coalesce(to_json(p_protect_receipt_id)::text, 'null') ||
    ',"receipt_id":' || coalesce(to_json(p_receipt_id)::text, 'null') ||
    ',"request_id":' || to_json(p_request_id)::text ||
    ',"seq":' || p_seq::text ||
    ',"tenant_id":' || to_json(p_tenant_id)::text ||
    ',"timestamp":' || to_json(p_timestamp)::text ||
    ',"v":2}')
$$;
COMMENT ON FUNCTION receipt_chain_hash(text, text, text, text, text, text, text, text, text, bigint) IS
  'chain_hash = "0x" + hex SHA-256 of JCS {v: 2, receipt_id, tenant_id, key_id, kind, request_id, timestamp, content_hash, '
  'protect_receipt_id, prev, seq}: the signed receipt claims plus the link.';

-- One row per tenant with a receipt: the size of its log, the last chain_hash and how many of
-- the receipts are audit events (which the plans' receipts_stored does not count). Appends lock
-- this row, so one tenant's appends take turns while other tenants' run in parallel.
-- Shapes are checked as a length plus an unbounded class: the same strings as a bounded
-- repetition such as {64}, which PostgreSQL's regex engine checks far more slowly.
CREATE TABLE receipt_heads (
  tenant_id    text PRIMARY KEY REFERENCES tenants (tenant_id),
  tree_size    bigint NOT NULL DEFAULT 0 CHECK (tree_size >= 0),
  head_hash    text CHECK (length(head_hash) = 66 AND head_hash ~ '^0x[0-9a-f]+$'),
  event_count  bigint NOT NULL DEFAULT 0 CHECK (event_count >= 0),
  CONSTRAINT receipt_heads_hash_matches_size CHECK ((tree_size = 0) = (head_hash IS NULL)),
  CONSTRAINT receipt_heads_events_within_size CHECK (event_count <= tree_size)
);

-- The receipt log's Merkle tree (RFC 9162), stored from level 4 up: every complete subtree of 16
-- leaves or more of each tenant's tree, subtree idx of level L covering leaves idx * 2^L ..
-- (idx + 1) * 2^L - 1. Added by receipt_log_store() as receipts are appended, never changed,
-- so that a tree head or a proof reads O(log N) of these rows instead of rehashing every receipt.
-- A subtree below level 4 is folded on read from its at most 15 receipts (receipt_tree_node()):
-- storing every level would write two rows per receipt, one per 8 receipts this way.
CREATE TABLE receipt_tree_nodes (
  tenant_id  text NOT NULL,
  level      smallint NOT NULL CHECK (level BETWEEN 4 AND 62),
  idx        bigint NOT NULL CHECK (idx >= 0),
  hash       bytea NOT NULL CHECK (length(hash) = 32),
  PRIMARY KEY (tenant_id, level, idx)
);

CREATE FUNCTION receipt_tree_nodes_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'receipt tree nodes are written only as receipts are appended, and never changed' USING ERRCODE = 'WR001';
END $$;
COMMENT ON FUNCTION receipt_tree_nodes_guard() IS
  'Stored Merkle nodes are never updated, deleted or truncated (WR001); receipt_tree_node_hash() computes each one inserted.';
CREATE TRIGGER receipt_tree_nodes_guard BEFORE UPDATE OR DELETE OR TRUNCATE ON receipt_tree_nodes
  FOR EACH STATEMENT EXECUTE FUNCTION receipt_tree_nodes_guard();

-- The root of a tenant's complete subtree of level p_level (2^p_level leaves from leaf
-- p_idx * 2^p_level) folded from its receipts' chain hashes; NULL while the log is shorter.
-- Planned at each call (force_custom_plan; a one-table range, cheap to plan): with its bounds in
-- hand the planner takes (tenant_id, seq) for a log of any size, whereas a generic plan kept from
-- a nearly empty table, where the two indexes' costs tie, may read the tenant's whole log through
-- the primary key and filter on seq (docs/performance.md, "Plans and a growing log").
CREATE FUNCTION receipt_subtree_fold(p_tenant text, p_level integer, p_idx bigint) RETURNS bytea
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_custom_plan AS $$
DECLARE
  v_hashes bytea[];
  v_width integer := 1 << p_level;
BEGIN
  SELECT array_agg(sha256('\x00'::bytea || decode(substr(r.chain_hash, 3), 'hex')) ORDER BY r.seq) INTO v_hashes
  FROM receipts r
  WHERE r.tenant_id = p_tenant AND r.seq >= p_idx << p_level AND r.seq < (p_idx + 1) << p_level;
  IF coalesce(cardinality(v_hashes), 0) <> v_width THEN
    RETURN NULL;
  END IF;
  WHILE v_width > 1 LOOP
    v_width := v_width / 2;
    FOR i IN 1 .. v_width LOOP
      v_hashes[i] := sha256('\x01'::bytea || v_hashes[2 * i - 1] || v_hashes[2 * i]);
    END LOOP;
  END LOOP;
  RETURN v_hashes[1];
END $$;
COMMENT ON FUNCTION receipt_subtree_fold(text, integer, bigint) IS
  'The RFC 9162 root of the tenant''s complete subtree (level, idx) computed from its receipts: leaf = SHA-256(0x00 || chain_hash bytes), '
  'node = SHA-256(0x01 || left || right); NULL when the log does not hold all of its leaves yet.';

-- Any complete subtree's root: stored from level 4 up, folded from its receipts below.
-- enable_seqscan off: the probe is by the whole key, and a plan kept from statistics of a small
-- receipt_tree_nodes would scan the table instead.
CREATE FUNCTION receipt_tree_node(p_tenant text, p_level integer, p_idx bigint) RETURNS bytea
LANGUAGE plpgsql STABLE SET enable_seqscan = off SET jit = off AS $$
BEGIN
  IF p_level < 4 THEN
    RETURN receipt_subtree_fold(p_tenant, p_level, p_idx);
  END IF;
  RETURN (SELECT n.hash FROM receipt_tree_nodes n WHERE n.tenant_id = p_tenant AND n.level = p_level AND n.idx = p_idx);
END $$;
COMMENT ON FUNCTION receipt_tree_node(text, integer, bigint) IS
  'The root of the tenant''s complete subtree (level, idx) of its receipt log''s Merkle tree: the stored node from level 4 up, '
  'folded from at most 15 receipts below; NULL when the log does not cover it.';

-- A stored node's hash is always the database's own, whoever inserts it: computed here from the
-- receipts (level 4) or from the two stored children below, so no code path or operator can store
-- a node that is not the log's, or one ahead of the log (its subtree not complete).
CREATE FUNCTION receipt_tree_node_hash() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_hash bytea := CASE WHEN NEW.level = 4 THEN receipt_subtree_fold(NEW.tenant_id, 4, NEW.idx)
                       ELSE sha256('\x01'::bytea || receipt_tree_node(NEW.tenant_id, NEW.level - 1, 2 * NEW.idx)
                                   || receipt_tree_node(NEW.tenant_id, NEW.level - 1, 2 * NEW.idx + 1)) END;
BEGIN
  IF v_hash IS NULL OR NEW.hash <> v_hash THEN
    RAISE EXCEPTION 'receipt tree nodes are written only as receipts are appended, and never changed' USING ERRCODE = 'WR001';
  END IF;
  NEW.hash := v_hash;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION receipt_tree_node_hash() IS
  'Sets an inserted Merkle node''s hash to its subtree''s root (level 4: folded from its 16 receipts; above: SHA-256(0x01 || left || right) '
  'of its stored children); refuses a node whose subtree the log does not hold yet, or a given hash that differs (WR001).';
CREATE TRIGGER receipt_tree_node_hash BEFORE INSERT ON receipt_tree_nodes
  FOR EACH ROW EXECUTE FUNCTION receipt_tree_node_hash();

-- A tree head's root: RFC 9162's MTH over the first p_size leaves, folded from the complete
-- subtrees [0, p_size) is made of (one per set bit of p_size), right to left: O(log N) nodes.
CREATE FUNCTION receipt_tree_root(p_tenant text, p_size bigint) RETURNS bytea
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_start bigint := p_size;
  v_node bytea;
  v_root bytea;
BEGIN
  IF p_size = 0 THEN
    RETURN sha256(''::bytea);
  END IF;
  FOR v_level IN 0 .. 62 LOOP
    CONTINUE WHEN (p_size >> v_level) & 1 = 0;
    v_start := v_start - (1::bigint << v_level);
    v_node := receipt_tree_node(p_tenant, v_level, v_start >> v_level);
    IF v_node IS NULL THEN
      RETURN NULL;
    END IF;
    v_root := CASE WHEN v_root IS NULL THEN v_node ELSE sha256('\x01'::bytea || v_node || v_root) END;
    EXIT WHEN v_start = 0;
  END LOOP;
  RETURN v_root;
END $$;
COMMENT ON FUNCTION receipt_tree_root(text, bigint) IS
  'The RFC 9162 root of the tenant''s first p_size receipts (SHA-256 of nothing for 0), from O(log N) subtree roots; NULL when the log is shorter.';

-- Nodes from level 4 up, one row per statement, each naming its tenant (on a Citus cluster a
-- statement of one shard; a call that completes no subtree, most of them, runs none): a node is new
-- when it ends within (lo, hi]. Each is inserted without its hash, which receipt_tree_node_hash()
-- computes: from its 16 receipts at level 4, from the two children the level below stored before.
-- enable_seqscan off: every statement probes an index, whatever a kept plan's statistics said.
CREATE FUNCTION receipt_tree_grow(p_tenants text[], p_lo bigint[], p_hi bigint[]) RETURNS void
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
  v_level integer;
BEGIN
  FOR k IN 1 .. coalesce(cardinality(p_tenants), 0) LOOP
    v_level := 4;
    -- A level without a new node has none above it: a multiple of 2^(L+1) is one of 2^L.
    WHILE (p_hi[k] >> v_level) > (p_lo[k] >> v_level) LOOP
      FOR v_idx IN (p_lo[k] >> v_level) .. (p_hi[k] >> v_level) - 1 LOOP
        INSERT INTO receipt_tree_nodes (tenant_id, level, idx, hash) VALUES (p_tenants[k], v_level, v_idx, NULL);
      END LOOP;
      v_level := v_level + 1;
    END LOOP;
  END LOOP;
END $$;
COMMENT ON FUNCTION receipt_tree_grow(text[], bigint[], bigint[]) IS
  'Adds the stored nodes (level >= 4) of each tenant''s Merkle tree that its log growing from lo to hi leaves completes, level by level, '
  '(their hashes computed by receipt_tree_node_hash(): RFC 9162). Called by receipt_log_store().';

-- Without foreign keys: receipt_log_store(), the one writer of receipts, checks a receipt's key and
-- the protect receipt a vote or an outcome names (receipt_execute_rules() an execute's), one probe
-- each. Keys and receipts are never deleted and never change identity (api_keys_guard,
-- receipts_append_only), so the check at insert is the whole guarantee; the tenant is implied by the key's (an event's, which no key signs, by the chain it
-- joins). A receipt is a decision (protect, execute: a key asked, ALLOWED or DENIED) or an audit
-- event (a change of who may do what: no key, no decision).
CREATE TABLE receipts (
  receipt_id          text NOT NULL CHECK (length(receipt_id) = 27 AND receipt_id ~ '^rcpt_[0-9A-Za-z]+$'),
  tenant_id           text NOT NULL,
  seq                 bigint NOT NULL CHECK (seq >= 0),
  kind                text NOT NULL CHECK (kind IN ('protect', 'execute', 'event', 'vote', 'approval')),
  key_id              text,
  request_id          text NOT NULL CHECK (length(request_id) BETWEEN 1 AND 128 AND request_id ~ '^[\x21-\x7e]+$'),
  issued_at           timestamptz NOT NULL,
  decision            text CHECK (decision IN ('ALLOWED', 'DENIED')),
  -- The JCS text of the payload: exactly the bytes content_hash covers (jsonb would refuse a
  -- \u0000 in an input string and would not keep the bytes).
  payload             text NOT NULL,
  content_hash        text NOT NULL,
  signature           text NOT NULL CHECK (signature ~ '^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$'),
  prev_hash           text CHECK (length(prev_hash) = 66 AND prev_hash ~ '^0x[0-9a-f]+$'),
  chain_hash          text NOT NULL CHECK (length(chain_hash) = 66 AND chain_hash ~ '^0x[0-9a-f]+$'),
  protect_receipt_id  text,
  -- The audit trail's name for the receipt, read from its payload; NULL for a plain decision. An
  -- event's payload names it (under kind "event"); an approval's steps are audit events too: the
  -- protect that opened one (its payload holds the terms), each vote, the outcome (by its status)
  -- and the execute of an approved outcome (its payload names the outcome). Stored, so that
  -- GET /customer/audit filters on it without parsing payloads.
  event               text GENERATED ALWAYS AS (
                        CASE kind
                          WHEN 'event' THEN CASE WHEN payload::jsonb ->> 'kind' = 'event' THEN payload::jsonb ->> 'event' END
                          WHEN 'vote' THEN 'approval.voted'
                          WHEN 'approval' THEN 'approval.' || (payload::jsonb -> 'outcome' ->> 'status')
                          WHEN 'protect' THEN CASE WHEN decision = 'DENIED' AND payload::jsonb ? 'requires_approval' THEN 'approval.requested' END
                          WHEN 'execute' THEN CASE WHEN payload::jsonb ? 'outcome' THEN 'approval.executed' END
                        END
                      ) STORED CHECK (event ~ '^[a-z]+(_[a-z]+)*\.[a-z]+(_[a-z]+)*$'),
  -- Keyed by tenant first, as every tenant table (docs/scaling.md): a receipt is always looked for
  -- in its tenant's log.
  PRIMARY KEY (tenant_id, receipt_id),
  CONSTRAINT receipts_tenant_seq_key UNIQUE (tenant_id, seq),
  CONSTRAINT receipts_content_hash_matches_payload CHECK (content_hash = sha256_hex(payload)),
  -- "decision" is the first key of a decision's JCS payload, so this pins the column to what was hashed.
  CONSTRAINT receipts_decision_matches_payload CHECK (starts_with(payload, '{"decision":"' || decision || '",')),
  -- A key asks for a decision (an approval's outcome names the key that asked); an event is the
  -- service's (or an operator's) and a vote a member's: they have neither.
  CONSTRAINT receipts_decision_matches_kind CHECK ((kind IN ('event', 'vote')) = (decision IS NULL) AND (kind IN ('event', 'vote')) = (key_id IS NULL)),
  -- An event's payload names the event, under kind "event"; votes and outcomes are always events of their approval (see the column).
  CONSTRAINT receipts_event_matches_kind CHECK (kind NOT IN ('event', 'vote', 'approval') OR event IS NOT NULL),
  -- An execute names the receipt it executes (a protect, or an approval's outcome); a vote and an
  -- outcome name the protect receipt of their approval.
  CONSTRAINT receipts_execute_names_protect CHECK ((kind IN ('execute', 'vote', 'approval')) = (protect_receipt_id IS NOT NULL)),
  CONSTRAINT receipts_prev_matches_seq CHECK ((seq = 0) = (prev_hash IS NULL))
);
-- A decision is executed at most once (partial: only executes; votes and outcomes name their protect
-- too). receipt_append() refuses a second execute itself (WR007); this is the backstop.
CREATE UNIQUE INDEX receipts_execute_once ON receipts (tenant_id, protect_receipt_id) WHERE kind = 'execute';
-- A tenant's audit trail, newest first (GET /customer/audit): its events and its approvals' steps.
CREATE INDEX receipts_events ON receipts (tenant_id, seq) WHERE event IS NOT NULL;

-- A tenant's receipt by its id, read through the primary key whatever the statistics. As a plain
-- equality, a plan made while the table was small (the embedded database never analyzes, and
-- PL/pgSQL keeps a session's plans) may take (tenant_id, seq) and filter on the id, reading the
-- tenant's whole log: the two costs tie. Written as a range of one id, in id order, only the
-- primary key serves it without a sort, so it wins. Inlined into the statements that call it.
CREATE FUNCTION receipt_by_id(p_tenant_id text, p_receipt_id text) RETURNS SETOF receipts
LANGUAGE sql STABLE AS $$
  SELECT x.* FROM receipts x
  WHERE x.tenant_id = p_tenant_id AND x.receipt_id >= p_receipt_id AND x.receipt_id <= p_receipt_id
  ORDER BY x.receipt_id LIMIT 1
$$;
COMMENT ON FUNCTION receipt_by_id(text, text) IS 'The tenant''s receipt with this id (no row: none), by a probe of the primary key.';

CREATE FUNCTION receipts_append_only() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'receipts are append-only' USING ERRCODE = 'WR001';
END $$;
COMMENT ON FUNCTION receipts_append_only() IS 'Refuses UPDATE, DELETE and TRUNCATE of stored receipts (WR001).';
CREATE TRIGGER receipts_append_only BEFORE UPDATE OR DELETE ON receipts
  FOR EACH ROW EXECUTE FUNCTION receipts_append_only();
CREATE TRIGGER receipts_no_truncate BEFORE TRUNCATE ON receipts
  FOR EACH STATEMENT EXECUTE FUNCTION receipts_append_only();

-- Receipts join the log only through receipt_log_store(), which moves each tenant's head past its
-- new receipts before it inserts them: a row its head does not cover is refused, so an INSERT
-- around the writers is refused whoever makes it, and no row is stored but as the exact next link
-- of its tenant's chain (its predecessor's chain_hash, the hash of its own link, the head's
-- chain_hash for the last). A row per probe of the head and one of its predecessor, in the order
-- of (tenant_id, seq) (an ordered range, as receipt_heads_covered() reads it).
CREATE FUNCTION receipts_link_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_size bigint;
  v_head text;
  v_seq bigint;
  v_prev text;
BEGIN
  -- One statement for both reads (an append's fixed cost is mostly its statements); no head, no row.
  SELECT h.tree_size, h.head_hash, p.seq, p.chain_hash INTO v_size, v_head, v_seq, v_prev
  FROM receipt_heads h
  LEFT JOIN LATERAL (
    SELECT r.seq, r.chain_hash FROM receipts r WHERE r.tenant_id = NEW.tenant_id AND r.seq < NEW.seq ORDER BY r.seq DESC LIMIT 1
  ) p ON true
  WHERE h.tenant_id = NEW.tenant_id;
  IF v_size IS NULL OR NEW.seq >= v_size
     OR (NEW.seq = v_size - 1 AND NEW.chain_hash IS DISTINCT FROM v_head)
     OR (NEW.seq > 0 AND (v_seq IS DISTINCT FROM NEW.seq - 1 OR NEW.prev_hash IS DISTINCT FROM v_prev))
     OR NEW.chain_hash <> receipt_chain_hash(NEW.receipt_id, NEW.tenant_id, NEW.key_id, NEW.kind, NEW.request_id, iso_time(NEW.issued_at),
                                             NEW.content_hash, NEW.protect_receipt_id, NEW.prev_hash, NEW.seq) THEN
    RAISE EXCEPTION 'receipts are stored only by the log''s writers, as the next links of their tenant''s chain (seq, prev_hash, chain_hash)'
      USING ERRCODE = 'WR005';
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION receipts_link_guard() IS
  'AFTER INSERT (row) on receipts: the row lies within its tenant''s head, which receipt_log_store() moved past it (a row written around the '
  'writers does not), links to the receipt before it (seq, prev_hash), is the head''s chain_hash when it is the last, and its chain_hash is '
  'the hash of its link; WR005 otherwise.';
CREATE TRIGGER receipts_link_guard AFTER INSERT ON receipts
  FOR EACH ROW EXECUTE FUNCTION receipts_link_guard();

-- A head moves only forward within its tenant, and is never removed. receipt_log_store() moves it
-- before inserting the receipts it passes, so what it passes is checked at commit
-- (receipt_heads_covered()).
CREATE FUNCTION receipt_heads_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.tenant_id = OLD.tenant_id AND NEW.tree_size > OLD.tree_size AND NEW.event_count >= OLD.event_count THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'receipt log heads only advance, to a stored receipt, counting its events' USING ERRCODE = 'WR001';
END $$;
COMMENT ON FUNCTION receipt_heads_guard() IS
  'A log head only moves forward within its tenant and is never removed (WR001); receipt_heads_covered() checks at commit where it stands.';
CREATE TRIGGER receipt_heads_guard BEFORE UPDATE OR DELETE ON receipt_heads
  FOR EACH ROW EXECUTE FUNCTION receipt_heads_guard();
CREATE TRIGGER receipt_heads_no_truncate BEFORE TRUNCATE ON receipt_heads
  FOR EACH STATEMENT EXECUTE FUNCTION receipt_heads_guard();

-- At commit, once the receipts a head passed are stored: it stands on its last one, counted their
-- events exactly (so that no UPDATE can free storage by calling decisions events) and the stored
-- Merkle tree holds the subtrees it completed. Both reads are written as ordered ranges on purpose:
-- as a plain equality on (tenant_id, seq), or a count with no order, a plan made while the table
-- had no statistics (a new database) could pick the primary key and filter on seq; an ordered
-- range can only be served by (tenant_id, seq), so the plan kept for the function is the right one
-- from its first call (planning both at every call, as this did before, cost three times the check).
CREATE FUNCTION receipt_heads_covered() RETURNS trigger
LANGUAGE plpgsql VOLATILE SET enable_seqscan = off SET jit = off AS $$
DECLARE
  v_seq bigint;
  v_chain text;
  v_events bigint;
BEGIN
  -- Both reads in one statement (an append's fixed cost is mostly its statements).
  SELECT l.seq, l.chain_hash, e.events INTO v_seq, v_chain, v_events
  FROM (SELECT count(*) FILTER (WHERE s.kind IN ('event', 'vote', 'approval')) AS events
        FROM (SELECT r.kind FROM receipts r
              WHERE r.tenant_id = NEW.tenant_id AND r.seq >= OLD.tree_size AND r.seq < NEW.tree_size
              ORDER BY r.seq) s) e
  LEFT JOIN LATERAL (
    SELECT r.seq, r.chain_hash FROM receipts r WHERE r.tenant_id = NEW.tenant_id AND r.seq < NEW.tree_size ORDER BY r.seq DESC LIMIT 1
  ) l ON true;
  IF v_seq IS DISTINCT FROM NEW.tree_size - 1 OR v_chain IS DISTINCT FROM NEW.head_hash
     OR NEW.event_count <> OLD.event_count + v_events THEN
    RAISE EXCEPTION 'receipt log heads only advance, to a stored receipt, counting its events' USING ERRCODE = 'WR001';
  END IF;
  -- The last node of each level the head crossed a boundary of (receipt_tree_node_hash() made each
  -- node from the ones below, so the last one stands for its level).
  FOR v_level IN 4 .. 62 LOOP
    EXIT WHEN (NEW.tree_size >> v_level) = 0;
    CONTINUE WHEN (NEW.tree_size >> v_level) = (OLD.tree_size >> v_level);
    IF NOT EXISTS (SELECT 1 FROM receipt_tree_nodes n
                   WHERE n.tenant_id = NEW.tenant_id AND n.level = v_level AND n.idx = (NEW.tree_size >> v_level) - 1) THEN
      RAISE EXCEPTION 'a log head advances with the stored Merkle tree of the receipts it passes' USING ERRCODE = 'WR001';
    END IF;
  END LOOP;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION receipt_heads_covered() IS
  'At commit (deferred, per head update): the head stands on a stored receipt (seq = tree_size - 1, head_hash its chain_hash), its '
  'event_count grew by exactly the events among the receipts it passed, and receipt_tree_nodes holds the subtrees of 16 leaves or more '
  'it completed (WR001 otherwise).';
CREATE CONSTRAINT TRIGGER receipt_heads_covered AFTER UPDATE ON receipt_heads
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION receipt_heads_covered();

-- A tenant's log head for the reads (no row: no such tenant; a tenant without receipts has size 0).
-- A function with enable_seqscan off, for the plan the reads keep: a prepared statement's plan made
-- on statistics of a few tenants would keep a scan of them all. STABLE: it reads with its
-- caller's snapshot, so a caller that reads the log in the same statement sees the same log.
CREATE FUNCTION receipt_head(p_tenant_id text)
RETURNS TABLE (tenant_id text, tree_size bigint, head_hash text, event_count bigint)
LANGUAGE plpgsql STABLE SET enable_seqscan = off SET jit = off AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT t.tenant_id, coalesce(h.tree_size, 0), h.head_hash, coalesce(h.event_count, 0)
    FROM tenants t LEFT JOIN receipt_heads h ON h.tenant_id = t.tenant_id
    WHERE t.tenant_id = p_tenant_id;
END $$;
COMMENT ON FUNCTION receipt_head(text) IS
  'The tenant''s log size, last chain_hash (NULL: an empty log) and count of audit events; no row: no such tenant.';

-- Per tenant and UTC day: how many protect and execute calls were accepted. Written only by
-- receipt_append(), under the tenant's head lock, so reading a count there and adding to it later
-- in the same call is exact.
CREATE TABLE usage_daily (
  tenant_id      text NOT NULL REFERENCES tenants (tenant_id),
  day            date NOT NULL,
  protect_count  integer NOT NULL DEFAULT 0 CHECK (protect_count >= 0),
  execute_count  integer NOT NULL DEFAULT 0 CHECK (execute_count >= 0),
  PRIMARY KEY (tenant_id, day)
);

-- Appending decisions ----------------------------------------------------------------------
-- receipt_append() runs the call's items through named pieces, each defined once: parse them,
-- lock their heads (receipt_heads_lock()), let each set of rules mark the items it refuses
-- (receipt_execute_rules(), then receipt_quota_rules(); an item keeps the first refusal), link the
-- accepted ones into their chains (receipt_link()), store them (receipt_log_store(): the keys
-- checked, each head moved once, the rows inserted, the Merkle tree grown; receipt_event_append()
-- stores audit receipts through it too) and count the day (receipt_usage_add()). A new set of rules joins the pipeline as one more function. receipt_append()
-- itself is in 14_receipt_append.sql, after the files of all its pieces (approvals, usage).

-- One item of a receipt_append() call, as parsed, with what the call decides for it.
CREATE TYPE receipt_append_item AS (
  idx integer, receipt_id text, tenant_id text, key_id text, kind text, request_id text,
  ts text, issued_at timestamptz, day date, decision text, payload text, content_hash text,
  signature text, protect_receipt_id text, approval json, usage json,
  refusal text, quota_limit integer, quota_used integer, seq bigint, prev_hash text, chain_hash text
);
COMMENT ON TYPE receipt_append_item IS 'One decision inside receipt_append(): its input and what the call decided for it.';

-- The one place the execute window is written; src/decide/payload.ts (EXECUTE_WINDOW_MINUTES)
-- names it in messages, and test/db/append.sql.test.ts checks the two agree.
CREATE FUNCTION receipt_execute_window() RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT interval '15 minutes'
$$;
COMMENT ON FUNCTION receipt_execute_window() IS
  'How long after its protect receipt an execute may come, by the two receipts'' own timestamps: 15 minutes. Older is WR004.';

CREATE FUNCTION receipt_append_parse(p_items json) RETURNS receipt_append_item[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_items receipt_append_item[];
  v_bad_ts text;
  v_bad_kind text;
BEGIN
  -- One statement: the items, and the first of each kind of fault below (a call's fixed cost is
  -- mostly its statements, docs/performance.md).
  SELECT array_agg(ROW((x.ord - 1)::integer, x.receipt_id, x.tenant_id, x.key_id, x.kind, x.request_id,
                       x."timestamp", x."timestamp"::timestamptz, (x."timestamp"::timestamptz AT TIME ZONE 'UTC')::date,
                       x.decision, x.payload, x.content_hash, x.signature, x.protect_receipt_id, x.approval, x.usage,
                       NULL, NULL, NULL, NULL, NULL, NULL)::receipt_append_item ORDER BY x.ord),
         (array_agg(x."timestamp" ORDER BY x.ord) FILTER (WHERE iso_time(x."timestamp"::timestamptz) IS DISTINCT FROM x."timestamp"))[1],
         (array_agg(coalesce(x.kind, 'NULL') ORDER BY x.ord) FILTER (WHERE x.kind IS DISTINCT FROM 'protect' AND x.kind IS DISTINCT FROM 'execute'))[1]
  INTO v_items, v_bad_ts, v_bad_kind
  FROM ROWS FROM (json_to_recordset(p_items) AS (
         receipt_id text, tenant_id text, key_id text, kind text, request_id text, "timestamp" text, decision text,
         payload text, content_hash text, signature text, protect_receipt_id text, approval json, usage json)) WITH ORDINALITY
       AS x(receipt_id, tenant_id, key_id, kind, request_id, "timestamp", decision, payload, content_hash, signature,
            protect_receipt_id, approval, usage, ord);
  -- The chain hashes the timestamp text and stores the instant, so the two must be one: a text
  -- that iso_time() would not give back is the caller's bug, and the whole call fails.
  IF v_bad_ts IS NOT NULL THEN
    RAISE EXCEPTION 'timestamp % is not in the canonical form', v_bad_ts USING ERRCODE = '22007';
  END IF;
  -- Decisions only: events go through receipt_event_append(), which counts them toward nothing.
  IF v_bad_kind IS NOT NULL THEN
    RAISE EXCEPTION 'receipt_append() stores protect and execute decisions, not %', v_bad_kind USING ERRCODE = '22023';
  END IF;
  RETURN v_items;
END $$;
COMMENT ON FUNCTION receipt_append_parse(json) IS
  'receipt_append()''s items as receipt_append_item[] (idx 0-based, in input order; NULL for none). Raises 22007 for a timestamp '
  'not in iso_time() form, 22023 for a kind other than protect or execute.';

-- Every writer of the log locks the heads it appends to in tenant order, so instances never
-- deadlock; a head is created when missing.
CREATE FUNCTION receipt_heads_lock(p_tenants text[]) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_tenant text;
BEGIN
  -- Each tenant once, in order: sorted here unless there is one (most calls name one tenant, and
  -- sorting one costs a statement).
  IF cardinality(p_tenants) > 1 THEN
    p_tenants := ARRAY(SELECT DISTINCT t FROM unnest(p_tenants) AS t ORDER BY 1);
  END IF;
  -- One statement per tenant, each naming it: on a Citus cluster each is its tenant's shard's.
  FOREACH v_tenant IN ARRAY coalesce(p_tenants, '{}') LOOP
    PERFORM 1 FROM receipt_heads h WHERE h.tenant_id = v_tenant FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO receipt_heads (tenant_id) VALUES (v_tenant) ON CONFLICT DO NOTHING;
      PERFORM 1 FROM receipt_heads h WHERE h.tenant_id = v_tenant FOR UPDATE;
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION receipt_heads_lock(text[]) IS
  'Creates the missing log heads of these tenants and locks them all (FOR UPDATE) in tenant order, the order every writer of the log locks in; '
  'what the rules then read of these tenants cannot change until the transaction ends.';

-- Whether the writers of the log run a call's tenants one at a time, each statement naming its
-- tenant: false on one server, where a call's statements serve all its tenants at once (one round
-- trip of the batch's tenants per statement); sql/citus/distribute.sql makes it true on a cluster.
-- IMMUTABLE, so that the planner folds it away.
CREATE FUNCTION receipt_append_by_tenant() RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT false $$;
COMMENT ON FUNCTION receipt_append_by_tenant() IS
  'Whether receipt_append() and receipt_event_append() run a call''s tenants one at a time (a Citus cluster: true) or all at once (one server: false).';

-- A call's items of one tenant, in input order, numbered from 0 as the pieces below address them
-- (idx), and back: receipt_append() and receipt_event_append() run their pieces one tenant at a time.
CREATE FUNCTION receipt_items_of(p_items receipt_append_item[], p_tenant text) RETURNS receipt_append_item[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  v_part receipt_append_item[] := '{}';
  v_item receipt_append_item;
BEGIN
  FOREACH v_item IN ARRAY p_items LOOP
    CONTINUE WHEN v_item.tenant_id IS DISTINCT FROM p_tenant;
    v_item.idx := cardinality(v_part);
    v_part := v_part || v_item;
  END LOOP;
  RETURN v_part;
END $$;
COMMENT ON FUNCTION receipt_items_of(receipt_append_item[], text) IS
  'The items of one tenant of a call, in input order, idx renumbered from 0 (receipt_items_put() puts them back).';

CREATE FUNCTION receipt_items_put(p_items receipt_append_item[], p_tenant text, p_part receipt_append_item[]) RETURNS receipt_append_item[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  k integer := 0;
BEGIN
  FOR i IN 1 .. cardinality(p_items) LOOP
    CONTINUE WHEN p_items[i].tenant_id IS DISTINCT FROM p_tenant;
    k := k + 1;
    p_part[k].idx := p_items[i].idx;
    p_items[i] := p_part[k];
  END LOOP;
  RETURN p_items;
END $$;
COMMENT ON FUNCTION receipt_items_put(receipt_append_item[], text, receipt_append_item[]) IS
  'The call''s items with those of p_tenant replaced by p_part (receipt_items_of() of them, as the pieces returned them), their idx restored.';

-- The pieces below take a call's items and p_tenant: NULL on one server, where one set-based
-- statement serves every tenant of the call (each table probed by its item's tenant), or the one
-- tenant of the items (receipt_items_of()) on a Citus cluster, where every statement then names it,
-- coalesce(p_tenant, i.tenant_id) folding to that tenant, so that each runs on its shard
-- (docs/scaling.md). They and receipt_link() run with the caller's settings: receipt_append() sets
-- plan_cache_mode = force_generic_plan and enable_seqscan = off for them. Their plans are made once
-- per session, often on a new database's nearly empty tables, and kept while the log grows, so each
-- statement is index probes whose index its shape decides (LATERAL ... LIMIT 1, in the index's
-- order: no other index serves it without a sort), and no table is scanned even when statistics
-- of a small table said a scan was cheaper (docs/performance.md, "Plans and a growing log").

CREATE FUNCTION receipt_execute_rules(p_tenant text, p_items receipt_append_item[]) RETURNS receipt_append_item[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v record;
BEGIN
  -- Most calls of a protect-only tenant check nothing.
  IF NOT EXISTS (SELECT 1 FROM unnest(p_items) AS i WHERE i.refusal IS NULL AND i.kind = 'execute') THEN
    RETURN p_items;
  END IF;
  -- A protect receipt is looked for in the execute's tenant only: another tenant's is not found.
  FOR v IN
    WITH checked AS (
      SELECT i.idx, i.kind, i.protect_receipt_id,
             CASE
               WHEN i.refusal IS NOT NULL OR i.kind <> 'execute' THEN NULL
               WHEN p.kind IS NULL OR p.kind NOT IN ('protect', 'approval') THEN 'WR002'
               WHEN p.decision <> 'ALLOWED' THEN 'WR003'
               -- An approved action is executed within its terms' execute_within of the approval.
               -- Only the key that asked executes what people approved for it.
               WHEN p.kind = 'approval' AND ap.key_id IS DISTINCT FROM i.key_id THEN 'WR011'
               WHEN p.kind = 'approval' AND (ap.execute_before IS NULL OR i.issued_at >= ap.execute_before) THEN 'WR010'
               WHEN p.kind = 'protect' AND i.issued_at - p.issued_at >= receipt_execute_window() THEN 'WR004'
               WHEN d.executed THEN 'WR007'
             END AS refusal,
             i.refusal IS NULL AND i.kind = 'execute' AS candidate
      FROM unnest(p_items) AS i
      LEFT JOIN LATERAL (
        -- As in receipt_by_id(), written out so that the statement names its tenant's table itself.
        SELECT r.kind, r.decision, r.issued_at FROM receipts r
        WHERE r.tenant_id = coalesce(p_tenant, i.tenant_id) AND r.receipt_id >= i.protect_receipt_id AND r.receipt_id <= i.protect_receipt_id
        ORDER BY r.receipt_id LIMIT 1
      ) stored ON true
      LEFT JOIN LATERAL (
        -- Or a protect earlier in this call, of the same tenant and not refused so far: a caller
        -- that stores a protect and its execute together (docs/api.md, "Remote MCP gateways").
        -- receipt_execute_rules_after() refuses the execute if a later rule refuses that protect.
        SELECT c.kind, c.decision, c.issued_at FROM unnest(p_items) AS c
        WHERE stored.kind IS NULL AND i.kind = 'execute' AND c.idx < i.idx AND c.tenant_id = i.tenant_id
          AND c.receipt_id = i.protect_receipt_id AND c.kind = 'protect' AND c.refusal IS NULL
        LIMIT 1
      ) called ON true
      CROSS JOIN LATERAL (
        SELECT coalesce(stored.kind, called.kind) AS kind, coalesce(stored.decision, called.decision) AS decision,
               coalesce(stored.issued_at, called.issued_at) AS issued_at
      ) p
      LEFT JOIN LATERAL (
        -- As in receipt_by_id(): a range of one id, in order, keeps the probe on receipts_execute_once.
        SELECT true AS executed FROM receipts x
        WHERE x.tenant_id = coalesce(p_tenant, i.tenant_id) AND x.kind = 'execute'
          AND x.protect_receipt_id >= i.protect_receipt_id AND x.protect_receipt_id <= i.protect_receipt_id
        ORDER BY x.protect_receipt_id LIMIT 1
      ) d ON true
      LEFT JOIN LATERAL (
        -- As in receipt_by_id(): a range of one id, in order, keeps the probe on approvals_outcome_receipt_id_key.
        SELECT a.execute_before, a.key_id FROM approvals a
        WHERE a.tenant_id = coalesce(p_tenant, i.tenant_id) AND p.kind = 'approval'
          AND a.outcome_receipt_id >= i.protect_receipt_id AND a.outcome_receipt_id <= i.protect_receipt_id
        ORDER BY a.outcome_receipt_id LIMIT 1
      ) ap ON true
    ), once AS (
      -- Of a batch's executes of one protect receipt that pass the checks above, the first goes on.
      SELECT c.idx,
             CASE WHEN c.candidate AND c.refusal IS NULL
                       AND row_number() OVER (PARTITION BY c.candidate AND c.refusal IS NULL, c.protect_receipt_id ORDER BY c.idx) > 1
                  THEN 'WR007' ELSE c.refusal END AS refusal
      FROM checked c
    )
    SELECT o.idx, o.refusal FROM once o WHERE o.refusal IS NOT NULL
  LOOP
    p_items[v.idx + 1].refusal := v.refusal;
  END LOOP;
  RETURN p_items;
END $$;
COMMENT ON FUNCTION receipt_execute_rules(text, receipt_append_item[]) IS
  'The execute rules of receipt_append() (p_tenant: NULL, or the one tenant of the items): each execute not refused yet needs a stored ALLOWED protect receipt of the '
  'tenant younger than receipt_execute_window() (WR004), or an approved approval''s outcome receipt (kind approval, ALLOWED) from the key that '
  'asked (WR011) before its execute_before (WR010) (WR002, WR003), not executed before, in the table or earlier in the call (WR007). The protect '
  'may also be an item earlier in the call, of the same tenant, not refused so far (then receipt_execute_rules_after() holds the execute to its fate). Sets those '
  'refusals; other items are returned as they came.';

-- An execute whose protect came earlier in the same call stands only if that protect is stored:
-- after every rule that may refuse an item, an execute of a protect refused meanwhile is WR002,
-- as if it had come alone after that refusal.
CREATE FUNCTION receipt_execute_rules_after(p_items receipt_append_item[]) RETURNS receipt_append_item[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  v record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM unnest(p_items) AS i WHERE i.refusal IS NULL AND i.kind = 'execute') THEN
    RETURN p_items;
  END IF;
  FOR v IN
    SELECT i.idx FROM unnest(p_items) AS i
    WHERE i.refusal IS NULL AND i.kind = 'execute'
      AND EXISTS (SELECT 1 FROM unnest(p_items) AS c
                  WHERE c.idx < i.idx AND c.tenant_id = i.tenant_id AND c.receipt_id = i.protect_receipt_id AND c.refusal IS NOT NULL)
  LOOP
    p_items[v.idx + 1].refusal := 'WR002';
  END LOOP;
  RETURN p_items;
END $$;
COMMENT ON FUNCTION receipt_execute_rules_after(receipt_append_item[]) IS
  'The last rule of receipt_append(): an execute of a protect earlier in the call that a rule refused after receipt_execute_rules() is WR002.';

CREATE FUNCTION receipt_quota_rules(p_tenant text, p_items receipt_append_item[]) RETURNS receipt_append_item[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v record;
BEGIN
  FOR v IN
    WITH placed AS (
      -- Each candidate's place in its tenant's day for its kind, counting what the day holds already.
      SELECT i.idx, i.tenant_id, i.kind, i.refusal, l.receipts_stored, h.decisions,
             CASE i.kind WHEN 'protect' THEN l.protect_per_day WHEN 'execute' THEN l.execute_per_day END AS day_limit,
             (CASE i.kind WHEN 'protect' THEN coalesce(u.protect_count, 0) ELSE coalesce(u.execute_count, 0) END
              + row_number() OVER (PARTITION BY i.tenant_id, i.day, i.kind, i.refusal IS NULL ORDER BY i.idx))::integer AS place
      FROM unnest(p_items) AS i
      CROSS JOIN LATERAL (
        SELECT pl.protect_per_day, pl.execute_per_day, pl.receipts_stored FROM tenants tn JOIN plans pl ON pl.plan = tn.plan
        WHERE tn.tenant_id = coalesce(p_tenant, i.tenant_id) LIMIT 1
      ) l
      -- Events do not count toward storage: only the decisions the log holds.
      CROSS JOIN LATERAL (
        SELECT h.tree_size - h.event_count AS decisions FROM receipt_heads h WHERE h.tenant_id = coalesce(p_tenant, i.tenant_id) LIMIT 1
      ) h
      LEFT JOIN LATERAL (
        SELECT u.protect_count, u.execute_count FROM usage_daily u WHERE u.tenant_id = coalesce(p_tenant, i.tenant_id) AND u.day = i.day LIMIT 1
      ) u ON true
    ), within_day AS (
      SELECT pd.*, pd.refusal IS NULL AND (pd.day_limit IS NULL OR pd.place <= pd.day_limit) AS day_ok
      FROM placed pd
    ), stored AS (
      -- The decisions stored before each item: the log's plus the earlier items within their day.
      SELECT w.*,
             w.decisions + count(*) FILTER (WHERE w.day_ok) OVER (PARTITION BY w.tenant_id ORDER BY w.idx
                                                                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS stored_before
      FROM within_day w
    )
    SELECT s.idx, s.day_limit, s.place,
           CASE
             -- Full storage outlasts the day, so it is reported first.
             WHEN s.receipts_stored IS NOT NULL AND s.stored_before >= s.receipts_stored THEN 'WQ003'
             WHEN NOT s.day_ok THEN CASE s.kind WHEN 'protect' THEN 'WQ001' ELSE 'WQ002' END
           END AS refusal
    FROM stored s
    WHERE s.refusal IS NULL
  LOOP
    p_items[v.idx + 1].refusal := v.refusal;
    IF v.refusal IS NULL THEN
      p_items[v.idx + 1].quota_limit := v.day_limit;
      p_items[v.idx + 1].quota_used := v.place;
    END IF;
  END LOOP;
  RETURN p_items;
END $$;
COMMENT ON FUNCTION receipt_quota_rules(text, receipt_append_item[]) IS
  'The quota rules of receipt_append() (p_tenant: NULL, or the one tenant of the items), for the items not refused yet, in input order: '
  'storage first (receipts_stored, decisions only: events are not counted, WQ003), then the day''s quota of the item''s kind (protect_per_day '
  'WQ001, execute_per_day WQ002). An accepted item gets its day''s limit (quota_limit, NULL: none) and its place in the day (quota_used); '
  'refused items count towards nothing.';

CREATE FUNCTION receipt_link(p_tenant text, p_items receipt_append_item[]) RETURNS receipt_append_item[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
  it record;
  v_tenant text := NULL;
  v_size bigint;
  v_head text;
BEGIN
  -- One ordered pass from each locked head, a tenant's accepted items in input order.
  FOR it IN
    SELECT i.idx, i.receipt_id, i.tenant_id, i.key_id, i.kind, i.request_id, i.ts, i.content_hash, i.protect_receipt_id,
           h.tree_size, h.head_hash
    FROM unnest(p_items) AS i
    CROSS JOIN LATERAL (
      SELECT h.tree_size, h.head_hash FROM receipt_heads h WHERE h.tenant_id = coalesce(p_tenant, i.tenant_id) LIMIT 1
    ) h
    WHERE i.refusal IS NULL
    ORDER BY i.tenant_id, i.idx
  LOOP
    IF v_tenant IS DISTINCT FROM it.tenant_id THEN
      v_tenant := it.tenant_id;
      v_size := it.tree_size;
      v_head := it.head_hash;
    END IF;
    p_items[it.idx + 1].seq := v_size;
    p_items[it.idx + 1].prev_hash := v_head;
    v_head := receipt_chain_hash(it.receipt_id, it.tenant_id, it.key_id, it.kind, it.request_id, it.ts, it.content_hash,
                                 it.protect_receipt_id, v_head, v_size);
    p_items[it.idx + 1].chain_hash := v_head;
    v_size := v_size + 1;
  END LOOP;
  RETURN p_items;
END $$;
COMMENT ON FUNCTION receipt_link(text, receipt_append_item[]) IS
  'The links of the accepted items (refusal NULL; p_tenant: NULL, or the one tenant of the items): each tenant''s, in input order, continue '
  'its chain from its head (locked by the caller): seq, prev_hash and chain_hash (receipt_chain_hash()) set; refused items are returned as they came.';

-- usage_daily is written only here, under the heads' locks, so the counts the quota rules read
-- and the ones added here are exact.
CREATE FUNCTION receipt_usage_add(p_tenant text, p_items receipt_append_item[]) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v record;
BEGIN
  IF p_tenant IS NULL THEN
    -- One server: each tenant's day counted once, in tenant order as the heads were locked, in one
    -- statement. (PL/pgSQL keeps the plan of this INSERT; a LANGUAGE sql function would plan it
    -- again at every batch.)
    INSERT INTO usage_daily AS u (tenant_id, day, protect_count, execute_count)
    SELECT i.tenant_id, i.day, count(*) FILTER (WHERE i.kind = 'protect'), count(*) FILTER (WHERE i.kind = 'execute')
    FROM unnest(p_items) AS i
    WHERE i.refusal IS NULL
    GROUP BY i.tenant_id, i.day
    ORDER BY i.tenant_id, i.day
    ON CONFLICT (tenant_id, day) DO UPDATE SET
      protect_count = u.protect_count + excluded.protect_count,
      execute_count = u.execute_count + excluded.execute_count;
    RETURN;
  END IF;
  -- One tenant (a cluster): a row per statement, which Citus routes to the tenant's shard.
  FOR v IN
    SELECT i.day, count(*) FILTER (WHERE i.kind = 'protect')::integer AS protects, count(*) FILTER (WHERE i.kind = 'execute')::integer AS executes
    FROM unnest(p_items) AS i
    WHERE i.refusal IS NULL
    GROUP BY i.day
    ORDER BY i.day
  LOOP
    INSERT INTO usage_daily AS u (tenant_id, day, protect_count, execute_count)
    VALUES (p_tenant, v.day, v.protects, v.executes)
    ON CONFLICT (tenant_id, day) DO UPDATE SET
      protect_count = u.protect_count + excluded.protect_count,
      execute_count = u.execute_count + excluded.execute_count;
  END LOOP;
END $$;
COMMENT ON FUNCTION receipt_usage_add(text, receipt_append_item[]) IS
  'Adds the accepted items (refusal NULL; p_tenant: NULL, or the one tenant of the items) to their tenants'' usage_daily counts of protect '
  'and execute calls, per UTC day.';

-- Storing: the one INSERT into receipts, of every kind (receipt_append() stores decisions,
-- receipt_event_append() audit receipts), under the head the caller locked.
CREATE FUNCTION receipt_log_store(p_tenant text, p_items receipt_append_item[]) RETURNS void
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
  v record;
  v_tenants text[];
  v_lo bigint[];
  v_hi bigint[];
  v_lo1 bigint;
  v_hi1 bigint;
  v_hash text;
  v_events bigint;
  v_no_key boolean;
  v_no_protect boolean;
  v_first text;
  v_last text;
BEGIN
  -- What the foreign keys would check, one probe each, all in one statement: a receipt's key is its
  -- tenant's, and so is the protect receipt a vote or an outcome names (an execute's is
  -- receipt_execute_rules()' WR002).
  SELECT coalesce(bool_or(i.key_id IS NOT NULL AND k.key_id IS NULL), false),
         coalesce(bool_or(i.protect_receipt_id IS NOT NULL AND i.kind <> 'execute' AND r.receipt_id IS NULL), false)
  INTO v_no_key, v_no_protect
  FROM unnest(p_items) AS i
  LEFT JOIN LATERAL (
    SELECT k.key_id FROM api_keys k WHERE k.tenant_id = coalesce(p_tenant, i.tenant_id) AND k.key_id = i.key_id LIMIT 1
  ) k ON true
  LEFT JOIN LATERAL (
    -- As in receipt_by_id(), written out so that the statement names its tenant's table itself.
    SELECT r.receipt_id FROM receipts r
    WHERE i.kind <> 'execute' AND r.tenant_id = coalesce(p_tenant, i.tenant_id)
      AND r.receipt_id >= i.protect_receipt_id AND r.receipt_id <= i.protect_receipt_id
    ORDER BY r.receipt_id LIMIT 1
  ) r ON true
  WHERE i.refusal IS NULL;
  IF v_no_key THEN
    RAISE EXCEPTION 'a receipt names a key that is not its tenant''s'
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'receipts_key_fkey';
  END IF;
  IF v_no_protect THEN
    RAISE EXCEPTION 'a receipt names a protect receipt that is not its tenant''s'
      USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'receipts_protect_receipt_fkey';
  END IF;
  -- Each tenant's head moves once, past its new receipts, before they are inserted: the rows are
  -- checked against it (receipts_link_guard), and it against them at commit (receipt_heads_covered).
  -- What the accepted items span, in one statement: their tenants (first and last), and for one
  -- tenant its new range, last link and events.
  SELECT min(i.tenant_id), max(i.tenant_id), min(i.seq), max(i.seq) + 1, (array_agg(i.chain_hash ORDER BY i.seq DESC))[1],
         count(*) FILTER (WHERE i.kind IN ('event', 'vote', 'approval'))
  INTO v_first, v_last, v_lo1, v_hi1, v_hash, v_events
  FROM unnest(p_items) AS i WHERE i.refusal IS NULL;
  IF v_first IS NULL THEN
    RETURN; -- nothing to store (every item of a call refused)
  END IF;
  IF v_first = v_last THEN
    -- One tenant (always on a cluster; most calls on one server): its head by one UPDATE naming it,
    -- cheaper than the set-based form below (docs/performance.md).
    UPDATE receipt_heads h SET tree_size = v_hi1, head_hash = v_hash, event_count = h.event_count + v_events
    WHERE h.tenant_id = v_first;
    v_tenants := ARRAY[v_first];
    v_lo := ARRAY[v_lo1];
    v_hi := ARRAY[v_hi1];
  ELSE
    -- Several tenants (one server only): every one in one statement.
    WITH moved AS (
      UPDATE receipt_heads h SET tree_size = l.hi, head_hash = l.chain_hash, event_count = h.event_count + l.events
      FROM (
        SELECT DISTINCT ON (i.tenant_id) i.tenant_id, i.chain_hash, i.seq + 1 AS hi, min(i.seq) OVER (PARTITION BY i.tenant_id) AS lo,
               count(*) FILTER (WHERE i.kind IN ('event', 'vote', 'approval')) OVER (PARTITION BY i.tenant_id) AS events
        FROM unnest(p_items) AS i WHERE i.refusal IS NULL ORDER BY i.tenant_id, i.seq DESC
      ) l
      WHERE h.tenant_id = l.tenant_id
      RETURNING h.tenant_id, l.lo, l.hi
    )
    SELECT array_agg(m.tenant_id ORDER BY m.tenant_id), array_agg(m.lo ORDER BY m.tenant_id), array_agg(m.hi ORDER BY m.tenant_id)
    INTO v_tenants, v_lo, v_hi
    FROM moved m;
  END IF;
  IF p_tenant IS NULL THEN
    -- One server: every receipt of the call in one statement.
    INSERT INTO receipts (receipt_id, tenant_id, seq, kind, key_id, request_id, issued_at, decision, payload,
                          content_hash, signature, prev_hash, chain_hash, protect_receipt_id)
    SELECT i.receipt_id, i.tenant_id, i.seq, i.kind, i.key_id, i.request_id, i.issued_at, i.decision, i.payload,
           i.content_hash, i.signature, i.prev_hash, i.chain_hash, i.protect_receipt_id
    FROM unnest(p_items) AS i
    WHERE i.refusal IS NULL
    ORDER BY i.tenant_id, i.seq;
  ELSE
    -- A cluster: one receipt per statement. Citus routes an INSERT ... VALUES to the tenant's shard
    -- and keeps a refusal's SQLSTATE, where it would copy an INSERT ... SELECT's rows (COPY answers
    -- a CHECK's refusal as XX000).
    FOR v IN SELECT * FROM unnest(p_items) AS i WHERE i.refusal IS NULL ORDER BY i.seq LOOP
      INSERT INTO receipts (receipt_id, tenant_id, seq, kind, key_id, request_id, issued_at, decision, payload,
                            content_hash, signature, prev_hash, chain_hash, protect_receipt_id)
      VALUES (v.receipt_id, p_tenant, v.seq, v.kind, v.key_id, v.request_id, v.issued_at, v.decision, v.payload,
              v.content_hash, v.signature, v.prev_hash, v.chain_hash, v.protect_receipt_id);
    END LOOP;
  END IF;
  -- The stored Merkle tree grows with the heads: every subtree of 16 leaves or more they complete.
  -- Called only when a head crossed a multiple of 16 (its settings cost a call even when it adds nothing).
  FOR k IN 1 .. cardinality(v_tenants) LOOP
    IF (v_hi[k] >> 4) > (v_lo[k] >> 4) THEN
      PERFORM receipt_tree_grow(v_tenants, v_lo, v_hi);
      EXIT;
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION receipt_log_store(text, receipt_append_item[]) IS
  'Stores the linked items not refused (receipt_link(); heads locked by the caller; p_tenant: NULL, or the one tenant of the items) as '
  'receipts: every key names a key of its tenant and every vote or outcome a receipt of its tenant (23503), each tenant''s head moves once '
  'past its new receipts (counting the audit receipts apart), the rows are inserted and the stored Merkle tree (receipt_tree_nodes) gains '
  'the subtrees of 16 leaves or more they complete. The one writer of receipts: receipt_append() and receipt_event_append() call it.';

-- Appending audit events ---------------------------------------------------------------------

-- The service signs an audit receipt (the signer holds the key) and calls this inside the
-- transaction of the change it records, so the change and its receipt commit together or not at
-- all: an event, or an approval's vote or outcome (receipt_append_one()). No quota, no storage
-- limit: the plans count decisions only.
CREATE FUNCTION receipt_event_append(p_items json)
RETURNS TABLE (receipt_id text, seq bigint, prev_hash text, chain_hash text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_items receipt_append_item[];
  v_part receipt_append_item[];
  v_tenant text;
  v_bad text;
BEGIN
  SELECT array_agg(ROW((x.ord - 1)::integer, x.receipt_id, x.tenant_id, x.key_id, coalesce(x.kind, 'event'), x.request_id,
                       x."timestamp", x."timestamp"::timestamptz, NULL, x.decision, x.payload, x.content_hash, x.signature,
                       x.protect_receipt_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)::receipt_append_item ORDER BY x.ord)
  INTO v_items
  FROM ROWS FROM (json_to_recordset(p_items) AS (
         receipt_id text, tenant_id text, key_id text, kind text, request_id text, "timestamp" text, decision text,
         payload text, content_hash text, signature text, protect_receipt_id text)) WITH ORDINALITY
       AS x(receipt_id, tenant_id, key_id, kind, request_id, "timestamp", decision, payload, content_hash, signature, protect_receipt_id, ord);
  IF v_items IS NULL THEN
    RETURN;
  END IF;
  SELECT i.ts INTO v_bad FROM unnest(v_items) AS i WHERE iso_time(i.issued_at) IS DISTINCT FROM i.ts LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'timestamp % is not in the canonical form', v_bad USING ERRCODE = '22007';
  END IF;
  -- Audit receipts only: a decision stored here would count toward nothing.
  SELECT i.kind INTO v_bad FROM unnest(v_items) AS i WHERE i.kind NOT IN ('event', 'vote', 'approval') LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'receipt_event_append() stores events, votes and approval outcomes, not %', v_bad USING ERRCODE = '23514';
  END IF;
  -- Each links to the head the one before it of its tenant advanced, in input order, under the
  -- heads locked in tenant order; on a cluster one tenant at a time, in that order.
  IF NOT receipt_append_by_tenant() THEN
    PERFORM receipt_heads_lock(ARRAY(SELECT i.tenant_id FROM unnest(v_items) AS i));
    v_items := receipt_link(NULL, v_items);
    PERFORM receipt_log_store(NULL, v_items);
  ELSE
    FOR v_tenant IN SELECT DISTINCT i.tenant_id FROM unnest(v_items) AS i ORDER BY 1 LOOP
      PERFORM receipt_heads_lock(ARRAY[v_tenant]);
      v_part := receipt_link(v_tenant, receipt_items_of(v_items, v_tenant));
      PERFORM receipt_log_store(v_tenant, v_part);
      v_items := receipt_items_put(v_items, v_tenant, v_part);
    END LOOP;
  END IF;
  RETURN QUERY SELECT i.receipt_id, i.seq, i.prev_hash, i.chain_hash FROM unnest(v_items) AS i ORDER BY i.idx;
END $$;
COMMENT ON FUNCTION receipt_event_append(json) IS
  'Stores a JSON array of signed audit receipts ({receipt_id, tenant_id, request_id, timestamp, payload, content_hash, signature}, and for '
  'an approval''s vote or outcome kind, key_id, decision and protect_receipt_id; kind event when absent) as their tenants'' next receipts, '
  'in input order, under the heads locked in tenant order (receipt_log_store()); one row per item with its link. They '
  'count toward no quota and not toward receipts_stored. Raises 22007 for a timestamp not in iso_time() form, 23514 for a kind other than '
  'event, vote or approval; the receipts table''s CHECKs refuse a payload that is not an event (23514). Call it in the transaction of the '
  'change it records.';
