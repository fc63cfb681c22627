// Shapes of the members, invitations and settings routes (docs/api.md, "Teams").
import { t } from "elysia";
import { Role } from "../accounts/model.ts";

const strict = { additionalProperties: false } as const;
const Iso = t.String({ format: "date-time" });

export const Member = t.Object({
  member_id: t.String({ pattern: "^mbr_" }),
  email: t.String(),
  role: Role,
  joined_at: Iso,
  mfa_enabled: t.Boolean(),
});
const KeyOfMember = t.Object({ key_id: t.String({ pattern: "^key_" }), label: t.String(), hint: t.String() });
export const MemberList = t.Object({
  ok: t.Literal(true),
  members: t.Array(
    t.Composite([
      Member,
      t.Object({
        keys: t.Array(t.Composite([KeyOfMember, t.Object({ created_at: Iso })]), {
          description: "the keys this member created that still work (active, or rotated with an overlap running), oldest first: a removal leaves them working unless revoke_keys",
        }),
      }),
    ]),
  ),
});
export const MemberResponse = t.Composite([t.Object({ ok: t.Literal(true) }), Member]);
export const MemberParams = t.Object({ member_id: t.String() });
export const RemoveQuery = t.Object(
  { revoke_keys: t.Optional(t.Boolean({ description: "also revoke the keys the member created, in the same step (the tenant's revoke_keys_on_member_removal does it always)" })) },
  strict,
);
export const MemberRemoved = t.Object({
  ok: t.Literal(true),
  member_id: t.String({ pattern: "^mbr_" }),
  revoked_keys: t.Array(KeyOfMember, { description: "the member's keys revoked with the removal, each a key.revoked event in the audit trail" }),
  kept_keys: t.Array(KeyOfMember, { description: "the member's keys that keep working: revoke them on their own, or remove with revoke_keys" }),
});
export const RoleBody = t.Object({ role: t.String() }, strict);

export const InvitationBody = t.Object({ email: t.String(), role: t.String() }, strict);
export const InvitationCreated = t.Object({
  ok: t.Literal(true),
  invitation_id: t.String({ pattern: "^inv_" }),
  email: t.String(),
  role: Role,
  expires_at: Iso,
});
export const InvitationStatus = t.Union([t.Literal("pending"), t.Literal("accepted"), t.Literal("revoked"), t.Literal("expired")]);
export const InvitationList = t.Object({
  ok: t.Literal(true),
  invitations: t.Array(
    t.Object({ invitation_id: t.String({ pattern: "^inv_" }), email: t.String(), role: Role, created_at: Iso, expires_at: Iso, status: InvitationStatus }),
  ),
});
export const InvitationParams = t.Object({ invitation_id: t.String() });
export const Ok = t.Object({ ok: t.Literal(true) });

export const AcceptBody = t.Object(
  {
    token: t.String(),
    password: t.Optional(t.String({ description: "without a session: a new person's password, or the password of the account the invited email has" })),
    code: t.Optional(t.String({ minLength: 1, maxLength: 64, description: "with the password of an account that has a second factor: a TOTP or recovery code" })),
  },
  strict,
);
export const PreviewBody = t.Object({ token: t.String() }, strict);
export const InvitationPreview = t.Object({
  ok: t.Literal(true),
  invitation_id: t.String({ pattern: "^inv_" }),
  email: t.String(),
  role: Role,
  expires_at: Iso,
  account_exists: t.Boolean({ description: "the invited email has an account: accept with its password (or its session), not a new one" }),
  mfa_required: t.Boolean({ description: "that account has a second factor: accepting with its password takes a code too" }),
});
export const AcceptResponse = t.Object({
  ok: t.Literal(true),
  token: t.String(),
  tenant_id: t.String({ pattern: "^cust_" }),
  member_id: t.String({ pattern: "^mbr_" }),
  role: Role,
  expires_at: Iso,
});

export const Settings = t.Object({
  require_mfa: t.Boolean(),
  allow_self_approval: t.Boolean(),
  revoke_keys_on_member_removal: t.Boolean({ description: "removing a member always revokes the keys they created" }),
});
export const SettingsBody = t.Object(
  { require_mfa: t.Optional(t.Boolean()), allow_self_approval: t.Optional(t.Boolean()), revoke_keys_on_member_removal: t.Optional(t.Boolean()) },
  strict,
);
export const SettingsResponse = t.Object({ ok: t.Literal(true), settings: Settings });

export const TenantList = t.Object({
  ok: t.Literal(true),
  tenants: t.Array(
    t.Object({
      tenant_id: t.String({ pattern: "^cust_" }),
      role: Role,
      member_id: t.String({ pattern: "^mbr_" }),
      joined_at: Iso,
      contact_email: t.Union([t.String(), t.Null()], { description: "the email of the tenant's oldest owner: how a person tells their tenants apart" }),
      current: t.Boolean(),
    }),
  ),
});
export const SwitchBody = t.Object({ tenant_id: t.String() }, strict);
