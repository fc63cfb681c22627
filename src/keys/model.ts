// Shapes of the /customer/keys routes (docs/api.md, API keys).
import { t } from "elysia";

// 1 to 100 characters, no control characters (PostgreSQL text cannot hold NUL).
export const CreateKeyBody = t.Object(
  { label: t.String({ minLength: 1, maxLength: 100, pattern: "^[^\\u0000-\\u001f\\u007f]+$" }) },
  { additionalProperties: false },
);
export const KeyParams = t.Object({ key_id: t.String() });

const Iso = t.String({ format: "date-time" });
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

export const KeyList = t.Object({
  ok: t.Literal(true),
  keys: t.Array(
    t.Object({
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
    }),
  ),
  next_cursor: t.Union([t.String(), t.Null()]),
});
