// Shapes of the approval routes (docs/api.md, "Approvals").
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ApprovalTerms, ProtectInput } from "../decide/policy.ts";
import { StoredReceipt, InclusionProof, Checkpoint } from "../receipts/model.ts";

const strict = { additionalProperties: false } as const;
const Iso = t.String({ format: "date-time" });
const Hash = t.String({ pattern: "^0x[0-9a-f]{64}$" });
const Status = t.Union([t.Literal("pending"), t.Literal("approved"), t.Literal("denied"), t.Literal("expired"), t.Literal("cancelled"), t.Literal("executed")]);

export const ApprovalParams = t.Object({ approval_id: t.String() });
export const WaitQuery = t.Object(
  { wait: t.Optional(t.Numeric({ minimum: 0, maximum: 30, description: "seconds to wait for the status to change (0 to 30); the answer comes as soon as it does" })) },
  strict,
);
export const ListQuery = t.Object(
  {
    status: t.Optional(Status),
    limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1, default: 50 })),
    cursor: t.Optional(t.String({ maxLength: 200 })),
  },
  strict,
);

const Votes = t.Array(t.Object({ member_id: t.String({ pattern: "^mbr_" }), account_id: t.String({ pattern: "^acct_", description: "the person: a quorum counts people" }), vote: t.Union([t.Literal("approve"), t.Literal("deny")]), at: Iso, receipt_id: t.String({ pattern: "^rcpt_" }) }));

/** An approval as agents and people see it. */
export const Approval = t.Object({
  approval_id: t.String({ pattern: "^apv_" }),
  status: Status,
  protect_receipt_id: t.String({ pattern: "^rcpt_" }),
  outcome_receipt_id: t.Union([t.String({ pattern: "^rcpt_" }), t.Null()], { description: "the signed outcome (kind approval): what POST /v1/execute takes once approved" }),
  execute_receipt_id: t.Union([t.String({ pattern: "^rcpt_" }), t.Null()]),
  action_hash: Hash,
  key_id: t.String(),
  rule: t.String(),
  quorum: Type.Integer({ minimum: 1, maximum: 5 }),
  terms: Type.Required(ApprovalTerms),
  votes: Votes,
  created_at: Iso,
  expires_at: Iso,
  decided_at: t.Union([Iso, t.Null()]),
  execute_before: t.Union([Iso, t.Null()]),
});
export const ApprovalResponse = t.Composite([t.Object({ ok: t.Literal(true) }), Approval]);
export const ApprovalList = t.Object({ ok: t.Literal(true), approvals: t.Array(Approval), next_cursor: t.Union([t.String(), t.Null()]) });

/** An approval with what the person deciding must see: the exact input, who asked, the policy, every receipt. */
export const ApprovalDetail = t.Composite([
  t.Object({ ok: t.Literal(true) }),
  Approval,
  t.Object({
    input: ProtectInput,
    policy: t.Object({ policy_id: t.String(), version: t.Union([t.Integer(), t.Null()]), hash: Hash }),
    reason: t.String(),
    receipts: t.Array(StoredReceipt),
  }),
]);

export const VoteBody = t.Object(
  {
    vote: t.Union([t.Literal("approve"), t.Literal("deny")]),
    action_hash: t.String({ maxLength: 66, description: "the action_hash shown: a vote on anything else is 409 action_changed" }),
    comment: t.Optional(t.String({ maxLength: 1000 })),
  },
  strict,
);

export const Bundle = t.Object({
  ok: t.Literal(true),
  receipts: t.Array(StoredReceipt),
  proofs: t.Array(InclusionProof),
  checkpoint: Checkpoint,
});
