// The closed error vocabulary (docs/api.md, Error codes), with one mapping to HTTP status.
// Code raises AppError; src/app/app.ts turns every failure into the error body.
import { t } from "elysia";
import { DbError, DbUnavailableError } from "../db/index.ts";
import { EXECUTE_WINDOW_MINUTES } from "../decide/payload.ts";

export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_request: 400,
  invalid_request_id: 400,
  invalid_preset: 400,
  invalid_email: 400,
  disposable_email: 400,
  password_too_short: 400,
  password_too_long: 400,
  password_too_common: 400,
  invalid_plan: 400,
  invalid_token: 400,
  token_expired: 400, // 401 when it is a JWT (raise with status 401)
  token_used: 400,
  unauthorized: 401,
  key_revoked: 401,
  key_expired: 401,
  key_disabled: 401,
  invalid_code: 401,
  https_required: 403,
  plan_required: 403,
  feature_not_granted: 403,
  decision_denied: 403,
  action_not_allowed: 403,
  forbidden_role: 403,
  self_approval: 403,
  forbidden_key: 403,
  mfa_enrollment_required: 403,
  insufficient_scope: 403,
  origin_not_allowed: 403,
  not_found: 404,
  email_taken: 409,
  already_member: 409,
  last_owner: 409,
  upgrade_pending: 409,
  not_pending: 409,
  mfa_enabled: 409,
  key_not_active: 409,
  webhook_disabled: 409,
  name_taken: 409,
  already_executed: 409,
  already_voted: 409,
  action_changed: 409,
  idempotency_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_mismatch: 422,
  policy_tests_failed: 422,
  rate_limited: 429,
  quota_exceeded: 429,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The error body's schema, for every route's documented failures. */
export const ErrorResponse = t.Object({
  ok: t.Literal(false),
  error: t.String(),
  message: t.String(),
  request_id: t.String(),
});

const DEFAULT_MESSAGES: Partial<Record<ErrorCode, string>> = {
  invalid_json: "The request body is not valid JSON.",
  unauthorized: "Missing or invalid credentials.",
  key_revoked: "This API key has been revoked.",
  not_found: "No such resource.",
  internal_error: "Something went wrong on our side. Quote the request id when reporting it.",
  unavailable: "The service is temporarily unavailable. Retry shortly.",
  https_required: "Use HTTPS.",
  payload_too_large: "The request body is larger than 64 KiB.",
  unsupported_media_type: "Send the request body as application/json.",
};

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly options: { status?: number; fields?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message ?? DEFAULT_MESSAGES[code] ?? code.replaceAll("_", " "));
    this.name = "AppError";
    this.status = options.status ?? ERROR_STATUS[code];
  }
}

/** The error body of every failure (docs/api.md, Error codes). */
export function errorBody(err: AppError, requestId: string): Record<string, unknown> {
  return { ok: false, error: err.code, message: err.message, request_id: requestId, ...err.options.fields };
}

// Database refusals that mean something to the caller, by SQLSTATE alone (docs/error_codes.md
// lists the custom SQLSTATEs): a procedure that must tell two refusals apart raises its own code,
// never left to a constraint's name (docs/scaling.md). Anything else is an internal error.
// The optional third element: fields of the error body (for example quota_exceeded's `limit`).
const BY_SQLSTATE: Record<string, [ErrorCode, string, Record<string, unknown>?]> = {
  WK001: ["key_not_active", "The key is not active."],
  WK002: ["quota_exceeded", "Your account has the most active API keys it may hold; revoke one first.", { limit: "api_keys_active" }],
  WK003: ["quota_exceeded", "Your account keeps the most API keys it may (revoked ones count); contact support.", { limit: "api_keys_total" }],
  WK004: ["invalid_request", "body/expires_at: must be in the future."],
  WK005: ["invalid_request", "body/limits/protect_per_day: must not exceed your plan's protect_per_day."],
  WA001: ["invalid_token", "This link is not valid. Request a new one."],
  WA002: ["token_expired", "This link has expired. Request a new one."],
  WA003: ["token_used", "This link has already been used."],
  WA004: ["unauthorized", "The current password is not correct."],
  WA010: ["invalid_code", "The code is wrong, expired or already used."],
  WA011: ["mfa_enabled", "A second factor is already active; disable it before enrolling again."],
  WA012: ["not_pending", "There is no enrolment to confirm; enroll first."],
  WA006: ["unauthorized", "This sign-in challenge was already used; log in again."],
  WA007: ["email_taken", "An account with this email already exists."],
  WT001: ["not_found", "No such resource."],
  WT003: ["last_owner", "A tenant always keeps an owner: make another member owner first."],
  WT004: ["quota_exceeded", "This tenant has the most members it may (100); remove one first.", { limit: "members" }],
  WT005: ["quota_exceeded", "This tenant has the most pending invitations it may (100); revoke one first.", { limit: "invitations_pending" }],
  WT006: ["already_member", "This person is already a member of the tenant."],
  WT007: ["not_pending", "Only a pending invitation can be revoked."],
  WT008: ["invalid_token", "This invitation was sent to another email address: log in as that address to accept it."],
  WT009: ["email_taken", "An account with this email was made meanwhile: accept the invitation with its password."],
  WT010: ["unauthorized", "Your membership of this tenant ended while the request ran; nothing was made."],
  WT020: ["forbidden_role", "This needs the owner role.", { required_role: "owner" }],
  WT021: ["forbidden_role", "This needs the admin role (or owner).", { required_role: "admin" }],
  WT022: ["forbidden_role", "This needs the developer role (or a wider one).", { required_role: "developer" }],
  WT023: ["forbidden_role", "This needs the approver role (or a wider one).", { required_role: "approver" }],
  WU001: ["invalid_plan", "Ask for a plan above your current one: pro or enterprise."],
  WU002: ["not_pending", "Only a pending upgrade request can change."],
  WU006: ["upgrade_pending", "An upgrade request is already pending; cancel it or wait for its review."],
  WU005: ["quota_exceeded", "Your account made the most upgrade requests allowed today; try again after 00:00 UTC.", { limit: "upgrade_requests_per_day" }],
  WR002: ["not_found", "No protect receipt with this id."],
  WR003: ["decision_denied", "The protect decision was DENIED; it cannot be executed."],
  WR004: ["token_expired", `The protect receipt is older than ${EXECUTE_WINDOW_MINUTES} minutes; ask /v1/protect again.`],
  WR007: ["already_executed", "This protect receipt has already been executed."],
  WR010: ["token_expired", "The approval's execute window (execute_within after it was approved) has closed; ask /v1/protect again."],
  WR011: ["forbidden_key", "Only the key that asked for this approval may execute it."],
  WQ001: ["quota_exceeded", "The daily protect quota of your plan is used up; it resets at 00:00 UTC.", { limit: "protect_per_day" }],
  WQ002: ["quota_exceeded", "The daily execute quota of your plan is used up; it resets at 00:00 UTC.", { limit: "execute_per_day" }],
  WP002: ["quota_exceeded", "This account stores the most policy versions it may (1000); restore or publish is refused. Contact support.", { limit: "policy_versions" }],
  WQ004: ["quota_exceeded", "This tenant has the most pending approvals it may (100): decide or cancel some first.", { limit: "approvals_pending" }],
  WV001: ["not_found", "No such approval."],
  WV002: ["not_pending", "This approval is no longer pending: it was decided, expired or cancelled."],
  WV003: ["already_voted", "You have voted on this approval already; each person votes once, through whichever membership."],
  WV004: ["action_changed", "The action is not the one you were shown: load the approval again and vote on what it says now."],
  WV005: ["self_approval", "You created the key that asked: someone else must approve its request."],
  WV006: ["forbidden_role", "Your role may not vote on this approval."],
  WV008: ["forbidden_key", "Only the key that asked for this approval may cancel it."],
  WQ003: ["quota_exceeded", "Receipt storage of your plan is full; nothing is deleted. Upgrade to store more.", { limit: "receipts_stored" }],
  WH002: ["quota_exceeded", "This tenant has the most webhook endpoints it may (10); delete one first.", { limit: "webhooks" }],
  WH003: ["webhook_disabled", "This endpoint was disabled after it answered 410 Gone; delete it and create another."],
  WH004: ["not_found", "No such webhook."],
  WH006: ["quota_exceeded", "This endpoint was sent the most test events allowed in an hour (60); try again later.", { limit: "webhook_tests_per_hour" }],
  WG001: ["not_found", "No such gateway."],
  WG002: ["invalid_request", "This gateway's upstream takes no per-member secret (its upstream_auth is not per_member)."],
  WG003: ["name_taken", "A live gateway of this tenant already has this name; pick another or delete that one."],
  WE001: ["invalid_request", "body/entities: an entity of the batch is not valid; nothing was written."],
  WE002: ["quota_exceeded", "Your plan stores no more entities; nothing was written. Delete some or upgrade.", { limit: "entities" }],
  WE003: ["not_found", "No entity of this type and id."],
  WI002: ["quota_exceeded", "Too many Idempotency-Key records are kept for your account; retry without the header or after older keys expire (24 h).", { limit: "idempotency_keys" }],
  // PostgreSQL text and jsonb cannot hold U+0000; only a caller's string can carry one there.
  "22021": ["invalid_request", "A string in the request contains U+0000 (NUL), which is not accepted."],
  "22P05": ["invalid_request", "A string in the request contains U+0000 (NUL), which is not accepted."],
};

export function fromDbError(err: DbError): AppError | undefined {
  const hit = BY_SQLSTATE[err.sqlstate];
  return hit ? new AppError(hit[0], hit[1], { fields: hit[2] }) : undefined;
}

/** Any thrown value as an AppError; unknown failures become internal_error (logged, not shown). */
export function toAppError(err: unknown): { error: AppError; unexpected: boolean } {
  if (err instanceof AppError) return { error: err, unexpected: false };
  if (err instanceof DbUnavailableError) {
    return { error: new AppError("unavailable", undefined, { headers: { "retry-after": "2" }, fields: { retry_after: 2 } }), unexpected: true };
  }
  if (err instanceof DbError) {
    const mapped = fromDbError(err);
    if (mapped) return { error: mapped, unexpected: false };
  }
  return { error: new AppError("internal_error"), unexpected: true };
}
