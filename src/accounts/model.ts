// Request and response shapes of the /auth routes (docs/api.md, Accounts and sessions).
import { t } from "elysia";

const strict = { additionalProperties: false } as const;

export const SignupBody = t.Object({ email: t.String(), password: t.String() }, strict);
/** A member's role in a tenant (docs/api.md, "Teams"). */
export const Role = t.Union([t.Literal("owner"), t.Literal("admin"), t.Literal("developer"), t.Literal("approver"), t.Literal("viewer")]);

export const SignupResponse = t.Object({
  ok: t.Literal(true),
  token: t.String(),
  tenant_id: t.String({ pattern: "^cust_" }),
  api_key: t.String({ pattern: "^warden_live_" }),
  email_verified: t.Boolean(),
  /** Additions to the spec's fields: the person is the tenant's first member, its owner. */
  member_id: t.String({ pattern: "^mbr_" }),
  role: t.Literal("owner"),
});

export const LoginBody = t.Object({ email: t.String(), password: t.String() }, strict);
export const LoginResponse = t.Object({
  ok: t.Literal(true),
  token: t.String(),
  tenant_id: t.String(),
  expires_at: t.String({ format: "date-time" }),
  /** Additions to the spec's fields: which member of the tenant the session is, with which role. */
  member_id: t.String({ pattern: "^mbr_" }),
  role: Role,
});

// Tokens are 43 base64url characters; anything up to 512 characters is looked up (and refused)
// rather than rejected by shape, so every wrong token gets the same invalid_token.
const TokenField = t.String({ maxLength: 512 });

/** `{}` or no body at all (our parser reads an empty body as null). */
export const EmptyBody = t.Union([t.Null(), t.Object({}, strict)]);
export const Accepted = t.Object({ ok: t.Literal(true) });

export const TokenBody = t.Object({ token: TokenField }, strict);
export const VerifyConfirmResponse = t.Object({ ok: t.Literal(true), email_verified: t.Literal(true) });
export const VerifyStatusResponse = t.Object({
  ok: t.Literal(true),
  email: t.String(),
  email_verified: t.Boolean(),
  verified_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

export const ResetRequestBody = t.Object({ email: t.String({ maxLength: 1000 }) }, strict);
export const ResetValidateResponse = t.Object({
  ok: t.Literal(true),
  valid: t.Boolean(),
  reason: t.Optional(t.Union([t.Literal("invalid_token"), t.Literal("token_expired"), t.Literal("token_used")])),
});
export const ResetConfirmBody = t.Object({ token: TokenField, password: t.String() }, strict);

export const AccountResponse = t.Object({
  ok: t.Literal(true),
  tenant_id: t.String(),
  email: t.String(),
  email_verified: t.Boolean(),
  plan: t.String(),
  created_at: t.String({ format: "date-time" }),
  /** An addition to the spec's fields: whether login asks for a second factor. */
  mfa_enabled: t.Boolean(),
  /** The session's member of the tenant and its role (docs/api.md, "Teams"). */
  member_id: t.String({ pattern: "^mbr_" }),
  role: Role,
});
export const PasswordChangeBody = t.Object({ current_password: t.String(), new_password: t.String() }, strict);
/** `{ok}`, plus a fresh session: the change ends every earlier one, the caller's too. */
export const PasswordChangeResponse = t.Object({ ok: t.Literal(true), token: t.String(), expires_at: t.String({ format: "date-time" }) });

// Sign-out and second factor (docs/api.md, Accounts and sessions).
/** Login with a second factor on: no session yet, a 5-minute challenge for /auth/mfa/verify. */
export const LoginMfaResponse = t.Object({
  ok: t.Literal(true),
  mfa_required: t.Literal(true),
  mfa_token: t.String(),
  expires_at: t.String({ format: "date-time" }),
});
export const LogoutBody = t.Union([t.Null(), t.Object({ all: t.Optional(t.Boolean()) }, strict)]);
// A TOTP code is 6 digits, a recovery code about 23 characters; longer is refused by shape.
const CodeField = t.String({ minLength: 1, maxLength: 64 });
export const MfaVerifyBody = t.Object({ mfa_token: t.String({ maxLength: 2048 }), code: CodeField }, strict);
export const MfaEnrollResponse = t.Object({ ok: t.Literal(true), secret: t.String(), otpauth_url: t.String() });
export const MfaConfirmBody = t.Object({ code: CodeField }, strict);
export const MfaConfirmResponse = t.Object({ ok: t.Literal(true), recovery_codes: t.Array(t.String(), { minItems: 10, maxItems: 10 }) });
export const MfaDisableBody = t.Object({ password: t.String(), code: CodeField }, strict);
