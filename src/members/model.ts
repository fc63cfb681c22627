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
export const MemberList = t.Object({ ok: t.Literal(true), members: t.Array(Member) });
export const MemberResponse = t.Composite([t.Object({ ok: t.Literal(true) }), Member]);
export const MemberParams = t.Object({ member_id: t.String() });
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

export const Settings = t.Object({ require_mfa: t.Boolean(), allow_self_approval: t.Boolean() });
export const SettingsBody = t.Object({ require_mfa: t.Optional(t.Boolean()), allow_self_approval: t.Optional(t.Boolean()) }, strict);
export const SettingsResponse = t.Object({ ok: t.Literal(true), settings: Settings });
