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
