// Shapes of the routes where a person accepts an invitation and lists or switches their tenants
// (docs/api.md, "Accounts and sessions").
import { t } from "elysia";
import { Role } from "./model.ts";

const strict = { additionalProperties: false } as const;
const Iso = t.String({ format: "date-time" });

export const AcceptBody = t.Object({ token: t.String(), password: t.Optional(t.String()) }, strict);
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
