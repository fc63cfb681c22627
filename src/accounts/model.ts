// Request and response shapes of the /auth routes (contract section 3).
import { t } from "elysia";

const strict = { additionalProperties: false } as const;

export const SignupBody = t.Object({ email: t.String(), password: t.String() }, strict);
export const SignupResponse = t.Object({
  ok: t.Literal(true),
  token: t.String(),
  tenant_id: t.String({ pattern: "^cust_" }),
  api_key: t.String({ pattern: "^warden_live_" }),
  email_verified: t.Boolean(),
});

export const LoginBody = t.Object({ email: t.String(), password: t.String() }, strict);
export const LoginResponse = t.Object({
  ok: t.Literal(true),
  token: t.String(),
  tenant_id: t.String(),
  expires_at: t.String({ format: "date-time" }),
});

export const ErrorResponse = t.Object({
  ok: t.Literal(false),
  error: t.String(),
  message: t.String(),
  request_id: t.String(),
});
