// Shapes of the routes where a person accepts an invitation and lists or switches their tenants
// (docs/api.md, "Accounts and sessions").
import { t } from "elysia";
import { Role } from "./model.ts";

const strict = { additionalProperties: false } as const;
const Iso = t.String({ format: "date-time" });

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
