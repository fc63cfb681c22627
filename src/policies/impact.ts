// What a draft policy would change: the inputs of stored protect receipts decided again. Pure over
// the rows it is given; nothing is stored.
import { decide, type Decision } from "../decide/engine.ts";
import { usageNeeds } from "../decide/usage-needs.ts";
import { factsFromReads, readsOf } from "../decide/entities.ts";
import { callerOf, type PayloadPrincipal, type PolicyDocument, type ProtectInput } from "../decide/policy.ts";

/** A stored protect receipt as the impact replay reads it (policies/impact_receipts.sql). */
export interface StoredDecision {
  receipt_id: string;
  key_id: string;
  payload: string;
  /** When it was decided: the approvals the draft would have asked for are counted per UTC day. */
  timestamp?: string;
}

type Outcome = { decision: Decision; reason: string };
export interface ImpactExample {
  receipt_id: string;
  input: ProtectInput;
  before: Outcome;
  after: Outcome;
  /** Whether the decision itself changes (ALLOWED <-> DENIED); false: the same decision for another reason. */
  flipped: boolean;
}

/** The most changed decisions an impact report shows. */
export const MAX_EXAMPLES = 20;

export function impactOf(rows: readonly StoredDecision[], draft: PolicyDocument) {
  let unchanged = 0;
  let allowedToDenied = 0;
  let deniedToAllowed = 0;
  let reasonChanged = 0;
  const examples: ImpactExample[] = [];
  // Decisions a require_approval rule of the draft would have held for people, per UTC day.
  const approvalDays = new Map<string, number>();
  // Replayed oldest first: the draft's usage limits count the traffic as it came, from zero, and
  // an action the draft denies counts toward nothing (so a lowered budget shows what it would have denied).
  const counters = new Map<string, number>();
  for (const row of [...rows].reverse()) {
    const payload = JSON.parse(row.payload) as { input: ProtectInput; decision: Decision; reasons: string[]; principal?: PayloadPrincipal; entities?: unknown };
    // The key that decided is the payload's principal when it names one; otherwise the caller's.
    // Through a remote gateway it also names the person's role, the agent and the gateway.
    const caller = payload.principal ? callerOf(payload.principal) : { key_id: row.key_id };
    // The entities as they were: the attributes the recorded decision read (one it did not read is missing).
    const entities = factsFromReads(payload.input, readsOf(payload.entities));
    const needs = row.timestamp ? usageNeeds(payload.input, draft, caller, row.timestamp, entities) : [];
    const slot = (n: (typeof needs)[number]) => `${n.counter}\u0000${n.scope}\u0000${n.window_start}`;
    const facts = new Map(needs.map((n) => [n.rule, { window_start: n.window_start, before: counters.get(slot(n)) ?? 0 }]));
    const after = decide(payload.input, draft, caller, facts, entities);
    if (after.decision === "ALLOWED") for (const n of needs) counters.set(slot(n), (counters.get(slot(n)) ?? 0) + n.add);
    if (after.approval) {
      const day = (row.timestamp ?? "").slice(0, 10) || "unknown";
      approvalDays.set(day, (approvalDays.get(day) ?? 0) + 1);
    }
    const before = { decision: payload.decision, reason: payload.reasons[0] };
    if (after.decision === before.decision && after.reasons[0] === before.reason) {
      unchanged++;
      continue;
    }
    if (before.decision === "ALLOWED" && after.decision === "DENIED") allowedToDenied++;
    if (before.decision === "DENIED" && after.decision === "ALLOWED") deniedToAllowed++;
    const flipped = after.decision !== before.decision;
    if (!flipped) reasonChanged++;
    // Oldest first here: the newest MAX_EXAMPLES are kept, and shown newest first below.
    examples.push({ receipt_id: row.receipt_id, input: payload.input, before, after: { decision: after.decision, reason: after.reasons[0] }, flipped });
    if (examples.length > MAX_EXAMPLES) examples.shift();
  }
  return {
    evaluated: rows.length,
    unchanged,
    changed: rows.length - unchanged,
    allowed_to_denied: allowedToDenied,
    denied_to_allowed: deniedToAllowed,
    reason_changed: reasonChanged,
    approval_required: [...approvalDays.values()].reduce((a, b) => a + b, 0),
    approval_required_by_day: [...approvalDays.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, count]) => ({ day, count })),
    examples: examples.reverse(),
  };
}
