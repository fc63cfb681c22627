// The audit trail's events (docs/api.md, "The audit trail"): every change of who may do what, each
// a signed receipt of kind "event" in the tenant's log. Which route records which event, and what
// its target holds, is in docs/decisions.md ("The audit trail in the receipt log").
import { requestId } from "../http/request-state.ts";
import type { EventActor } from "../receipts/event.ts";

export const EVENTS = [
  "member.invited",
  "member.invitation_revoked",
  "member.joined",
  "member.role_changed",
  "member.removed",
  "key.created",
  "key.rotated",
  "key.revoked",
  "key.updated",
  "policy.published",
  "policy.restored",
  "policy.tests_changed",
  "upgrade.requested",
  "upgrade.cancelled",
  "upgrade.approved",
  "upgrade.rejected",
  "feature.granted",
  "feature.revoked",
  "mfa.enabled",
  "mfa.disabled",
  "settings.changed",
  "sessions.ended",
  "webhook.created",
  "webhook.secret_rotated",
  "webhook.deleted",
  "gateway.created",
  "gateway.disabled",
  "gateway.enabled",
  "gateway.deleted",
  "gateway.secret_set",
  "gateway.secret_deleted",
  "entities.upserted",
  "entities.deleted",
  "oauth.grant_created",
  "oauth.grant_revoked",
] as const;

export type EventName = (typeof EVENTS)[number];

/**
 * An approval's steps, which the trail lists from the approval's own receipts (a protect that
 * opened it, each vote, the outcome, the execute) rather than from receipts of kind event: the
 * receipts table names them (its event column), ./entries.ts tells who and what.
 */
export const APPROVAL_EVENTS = [
  "approval.requested",
  "approval.voted",
  "approval.approved",
  "approval.denied",
  "approval.expired",
  "approval.cancelled",
  "approval.executed",
] as const;

const LISTED: readonly string[] = [...EVENTS, ...APPROVAL_EVENTS];

/** The families a listing may filter on as `family.*`: the part of each name before its dot. */
const FAMILIES = new Set<string>(LISTED.map((name) => name.slice(0, name.indexOf("."))));

/**
 * GET /customer/audit's `event` filter: an event's exact name, or `family.*` for all of a family
 * (`key.*`). Undefined for anything else, so a mistyped name is a 400, not an empty page.
 */
export function eventFilter(text: string): { event: string; prefix: null } | { event: null; prefix: string } | undefined {
  if (LISTED.includes(text)) return { event: text, prefix: null };
  const family = /^([a-z]+)\.\*$/.exec(text)?.[1];
  return family !== undefined && FAMILIES.has(family) ? { event: null, prefix: `${family}.` } : undefined;
}

/** One change to record: whose tenant, what, by whom, to what, through which request. */
export interface AuditEvent {
  tenantId: string;
  event: EventName;
  actor: EventActor;
  target: Record<string, unknown>;
  /** The HTTP request that made the change (an operator's: `ops-<outbox id>`). */
  requestId: string;
  /** When the change happened, when it is not now (an operator's change, signed after its commit). */
  at?: string;
}

/** Who changes something through a session request: the tenant, its member, the request. */
export interface ByMember {
  tenantId: string;
  actor: { member_id: string };
  requestId: string;
}

export function byMember(session: { tenant_id: string; member_id: string }, request: Request): ByMember {
  return { tenantId: session.tenant_id, actor: { member_id: session.member_id }, requestId: requestId(request) };
}
