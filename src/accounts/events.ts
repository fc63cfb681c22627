// Security events (issue 3): one JSON line each, with the tenant when known, the client
// address, the request id and the time (added by the logger). Never a password, token or
// secret; an email only masked (PII), enough to spot a pattern without naming the person.
import type { Logger } from "../log.ts";
import { maskEmail } from "../mask-email.ts";
import { requestState } from "../http/request-state.ts";

export type SecurityEvent =
  | "auth.signup"
  | "auth.login_succeeded"
  | "auth.login_failed"
  | "auth.verification_requested"
  | "auth.email_verified"
  | "auth.verification_failed"
  | "auth.reset_requested"
  | "auth.reset_completed"
  | "auth.reset_failed"
  | "auth.password_changed"
  | "auth.password_change_failed"
  | "auth.rate_limited"
  | "auth.login_slowed"
  | "auth.logout"
  | "auth.mfa_enrolled"
  | "auth.mfa_enabled"
  | "auth.mfa_disabled"
  | "auth.mfa_recovery_codes_replaced"
  | "auth.mfa_challenged"
  | "auth.mfa_failed"
  | "auth.tenant_switched"
  | "auth.invitation_accepted"
  | "auth.invitation_failed";

const WARN: ReadonlySet<SecurityEvent> = new Set([
  "auth.login_failed",
  "auth.verification_failed",
  "auth.reset_failed",
  "auth.password_change_failed",
  "auth.rate_limited",
  "auth.login_slowed",
  "auth.mfa_failed",
  "auth.invitation_failed",
]);

export function securityEvent(
  deps: { log: Logger },
  request: Request,
  event: SecurityEvent,
  fields: { tenant_id?: string | null; email?: string; reason?: string; [name: string]: string | number | boolean | null | undefined } = {},
): void {
  const state = requestState(request);
  const { email, tenant_id, ...rest } = fields;
  const line = { tenant_id: tenant_id ?? null, ip: state.ip ?? null, request_id: state.id, ...rest, ...(email === undefined ? {} : { email: maskEmail(email) }) };
  (WARN.has(event) ? deps.log.warn : deps.log.info)(event, line);
}
