// Shapes of /customer/policy and its versions, tests and impact (docs/api.md, Policy; the
// language: docs/policy.md).
import { Type, type Static } from "@sinclair/typebox";
import { t } from "elysia";
import { PolicyDocument, ProtectInput } from "../decide/policy.ts";
import { Decision, RuleId, TestCases } from "./cases.ts";

const strict = { additionalProperties: false } as const;
const Hash = t.String({ pattern: "^0x[0-9a-f]{64}$" });

export const PutPolicyBody = t.Object({ document: PolicyDocument }, strict);

/** The member who published a version; null for the built-in default (and an operator's). */
const PublishedBy = t.Union([t.String({ pattern: "^mbr_" }), t.Null()], { description: "the member who published this version; null for the built-in default" });

export const PolicyResponse = t.Object({
  ok: t.Literal(true),
  policy_id: t.String({ pattern: "^pol_" }),
  version: Type.Integer({ minimum: 1 }),
  hash: Hash,
  document: PolicyDocument,
  published_by: PublishedBy,
});

export const VersionParams = t.Object({ version: t.String({ maxLength: 20 }) });

export const VersionList = t.Object({
  ok: t.Literal(true),
  versions: t.Array(
    t.Object({ version: Type.Integer({ minimum: 1 }), hash: Hash, created_at: t.String({ format: "date-time" }), rules: Type.Integer({ minimum: 0 }), published_by: PublishedBy }),
  ),
  next_cursor: t.Union([t.String(), t.Null()]),
});

export const VersionResponse = t.Object({
  ok: t.Literal(true),
  policy_id: t.String({ pattern: "^pol_" }),
  version: Type.Integer({ minimum: 1 }),
  hash: Hash,
  document: PolicyDocument,
  published_by: PublishedBy,
  created_at: t.String({ format: "date-time" }),
});

export { MAX_CASES, TestCase, TestCases } from "./cases.ts";

export const TestBody = t.Object({ document: t.Optional(PolicyDocument), cases: TestCases }, strict);

export const CaseResult = t.Object({
  name: t.String(),
  passed: t.Boolean(),
  decision: Decision,
  reason: t.String(),
  rule: RuleId,
  approval_required: t.Optional(t.Literal(true, { description: "present when a require_approval rule decided the case" })),
});
export type CaseResult = Static<typeof CaseResult>;

export const TestReport = t.Object({ ok: t.Literal(true), passed: Type.Integer(), failed: Type.Integer(), results: t.Array(CaseResult) });

export const TestsBody = t.Object({ cases: TestCases }, strict);
export const TestsResponse = t.Object({ ok: t.Literal(true), cases: TestCases });

export const ImpactBody = t.Object({ document: PolicyDocument, limit: t.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })) }, strict);

const Outcome = t.Object({ decision: Decision, reason: t.String() });
export const ImpactReport = t.Object({
  ok: t.Literal(true),
  evaluated: Type.Integer(),
  unchanged: Type.Integer(),
  changed: Type.Integer({ description: "decisions whose outcome changes at all: allowed_to_denied + denied_to_allowed + reason_changed" }),
  allowed_to_denied: Type.Integer(),
  denied_to_allowed: Type.Integer(),
  reason_changed: Type.Integer({ description: "the same decision for another reason (no flip)" }),
  approval_required: Type.Integer({ description: "how many of the decisions evaluated a require_approval rule of the draft would have held for people" }),
  approval_required_by_day: t.Array(t.Object({ day: t.String({ description: "UTC day, YYYY-MM-DD" }), count: Type.Integer() })),
  examples: t.Array(
    t.Object({ receipt_id: t.String(), input: ProtectInput, before: Outcome, after: Outcome, flipped: t.Boolean({ description: "the decision changes; false: only its reason" }) }),
  ),
});
