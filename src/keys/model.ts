// Shapes of the /customer/keys routes (docs/api.md, API keys).
import { t } from "elysia";
import { ActionPattern } from "../decide/policy.ts";

const Iso = t.String({ format: "date-time" });
// 1 to 100 characters, no control characters (PostgreSQL text cannot hold NUL).
const Label = t.String({ minLength: 1, maxLength: 100, pattern: "^[^\\u0000-\\u001f\\u007f]+$" });

/** Most metadata entries a key holds, and the bounds of their names and values. */
export const METADATA_MAX_ENTRIES = 16;

export const KeyLimits = t.Object(
  {
    protect_per_day: t.Optional(t.Integer({ minimum: 1, maximum: 1_000_000_000, description: "protects a UTC day, at most the plan's" })),
    per_second: t.Optional(t.Integer({ minimum: 1, maximum: 10_000, description: "requests a second on average (token bucket)" })),
    burst: t.Optional(t.Integer({ minimum: 1, maximum: 10_000, description: "requests at once after a pause (the bucket's size; default per_second)" })),
  },
  { additionalProperties: false },
);

// The properties of a key for agents (docs/api.md, "Keys for agents"); null clears one.
const KeyProps = {
  expires_at: t.Optional(t.Union([Iso, t.Null()], { description: "after this instant the key gets 401 key_expired; in the future when set" })),
  enabled: t.Optional(t.Boolean({ description: "false suspends the key (401 key_disabled) until set true again" })),
  actions: t.Optional(t.Union([t.Array(ActionPattern, { minItems: 1, maxItems: 50 }), t.Null()], { description: "the action patterns the key may ask about (policy syntax); others get 403 action_not_allowed" })),
  limits: t.Optional(t.Union([KeyLimits, t.Null()])),
  allowed_ips: t.Optional(t.Union([t.Array(t.String({ minLength: 1, maxLength: 50 }), { minItems: 1, maxItems: 50 }), t.Null()], { description: "IPv4 and IPv6 CIDR blocks the key may be used from; others get 401 unauthorized" })),
  metadata: t.Optional(
    t.Union([
      t.Record(t.String({ pattern: "^[A-Za-z0-9_.:-]{1,40}$" }), t.String({ maxLength: 256, pattern: "^[^\\u0000]*$" }), { maxProperties: METADATA_MAX_ENTRIES, additionalProperties: false }),
      t.Null(),
    ], { description: `string map, at most ${METADATA_MAX_ENTRIES} entries (names 1 to 40 of A-Z a-z 0-9 _ . : -, values up to 256 characters)` }),
  ),
};

export const CreateKeyBody = t.Object({ label: Label, ...KeyProps }, { additionalProperties: false });
export const UpdateKeyBody = t.Object({ label: t.Optional(Label), ...KeyProps }, { additionalProperties: false, minProperties: 1 });
export const KeyParams = t.Object({ key_id: t.String() });
export const RotateKeyBody = t.Object(
  { overlap: t.Optional(t.Integer({ minimum: 0, maximum: 86_400, description: "seconds the old secret is still accepted (default 0)" })) },
  { additionalProperties: false },
);

const KeyId = t.String({ pattern: "^key_" });
const Secret = t.String({ pattern: "^warden_live_" });
/** The member who made or ended a key (docs/api.md, "Teams"); null when no member did (an operator). */
const MemberRef = t.Union([t.String({ pattern: "^mbr_" }), t.Null()]);

export const KeyCreated = t.Object({
  ok: t.Literal(true),
  key_id: KeyId,
  tenant_id: t.String(),
  label: t.String(),
  status: t.Literal("active"),
  secret: Secret,
  created_at: Iso,
  created_by: MemberRef,
});

export const KeyRotated = t.Object({
  ok: t.Literal(true),
  revoked_key_id: KeyId,
  key_id: KeyId,
  tenant_id: t.String(),
  label: t.String(),
  status: t.Literal("active"),
  secret: Secret,
  created_at: Iso,
  created_by: MemberRef,
});

export const KeyRevoked = t.Object({ ok: t.Literal(true), key_id: KeyId, status: t.Literal("revoked"), revoked_at: Iso, revoked_by: MemberRef });

export const KeyListQuery = t.Object(
  {
    limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1, default: 50 })),
    cursor: t.Optional(t.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const KeyView = t.Object({
  key_id: KeyId,
  tenant_id: t.String(),
  label: t.String(),
  status: t.Union([t.Literal("active"), t.Literal("revoked")]),
  created_at: Iso,
  last_used_at: t.Union([Iso, t.Null()]),
  revoked_at: t.Union([Iso, t.Null()]),
  hint: t.String(),
  created_by: MemberRef,
  revoked_by: MemberRef,
  expires_at: t.Union([Iso, t.Null()]),
  enabled: t.Boolean(),
  actions: t.Union([t.Array(t.String()), t.Null()]),
  limits: t.Object({ protect_per_day: t.Optional(t.Integer()), per_second: t.Optional(t.Integer()), burst: t.Optional(t.Integer()) }),
  allowed_ips: t.Union([t.Array(t.String()), t.Null()]),
  metadata: t.Record(t.String(), t.String()),
  /** A key rotated with an overlap: its secret is accepted until then. */
  overlap_until: t.Union([Iso, t.Null()]),
});

export const KeyList = t.Object({
  ok: t.Literal(true),
  keys: t.Array(KeyView),
  next_cursor: t.Union([t.String(), t.Null()]),
});

/** PATCH answers the key as listed, after the change. */
export const KeyUpdated = t.Object({ ok: t.Literal(true), ...KeyView.properties });
