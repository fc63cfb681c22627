// The payload of an audit event receipt (docs/api.md, "The audit trail"): the JCS text its
// content_hash covers. Events are receipts of kind "event" in the tenant's log, beside its decisions.

/** Who made the change: a member of the tenant, or an operator (the reviewer an ops script names). */
export type EventActor = { member_id: string } | { operator: string };

export interface EventPayload {
  v: 2;
  kind: "event";
  /** "member.invited", "key.revoked", ...: src/audit/events.ts lists them. */
  event: string;
  actor: EventActor;
  /** What the change was made to: ids and the new values, never a secret. */
  target: Record<string, unknown>;
  /** When the change happened: the receipt's timestamp, or for an operator's change, its commit's time. */
  at: string;
}
