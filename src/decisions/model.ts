// Shapes of /v1/protect, /v1/execute and /v1/verify (docs/api.md, Decisions: protect, execute, verify).
import { t } from "elysia";
import { Receipt } from "../receipts/model.ts";
import { ServedVerified } from "../simulation/model.ts";

/**
 * The approval a require_approval rule opened, or the one a retry of the same action by the same
 * key answers (docs/api.md, "Approvals"); absent otherwise.
 */
const OpenedApproval = t.Object(
  {
    approval_id: t.String({ pattern: "^apv_" }),
    status: t.Union([t.Literal("pending"), t.Literal("approved"), t.Literal("denied"), t.Literal("expired")], {
      description: "pending: opened now or by an earlier call; approved (executable before execute_before), denied or expired: a retry answered with its outcome",
    }),
    expires_at: t.String({ format: "date-time" }),
    outcome_receipt_id: t.Union([t.String({ pattern: "^rcpt_" }), t.Null()], { description: "the outcome receipt once decided (execute it when approved)" }),
    action_hash: t.String({ pattern: "^0x[0-9a-f]{64}$", description: "the receipt's content_hash: the action the votes name" }),
  },
  { additionalProperties: false },
);
export const ProtectResult = t.Object({ ok: t.Literal(true), verified: ServedVerified, ...Receipt.properties, approval: t.Optional(OpenedApproval) });
// Any string: an id of any shape that names no receipt of the caller is 404 not_found, as Stripe answers.
export const ExecuteBody = t.Object({ receipt_id: t.String() }, { additionalProperties: false });
export const ExecuteResult = t.Object({ ok: t.Literal(true), executed: t.Literal(true), verified: ServedVerified, ...Receipt.properties });

export const VerifyBody = t.Object({ receipt: t.Unknown({ description: "A whole protect, execute or simulation result as returned, or a stored receipt (an audit event too: `decision` then checks that it claims none)" }) }, { additionalProperties: false });
export const VerifyResponse = t.Object({
  ok: t.Literal(true),
  verified: t.Boolean({ description: "true when every check holds (for a simulation, which is never stored, every check but stored)" }),
  checks: t.Object({ content_hash: t.Boolean(), signature: t.Boolean(), decision: t.Boolean(), stored: t.Boolean() }),
});
