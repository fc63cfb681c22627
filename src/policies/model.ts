// Shapes of /customer/policy and its versions, tests and impact (docs/api.md, Policy; the
// language: docs/policy.md).
import { Type, type Static } from "@sinclair/typebox";
import { t } from "elysia";
import { PolicyDocument, ProtectInput } from "../decide/policy.ts";

const strict = { additionalProperties: false } as const;
const Hash = t.String({ pattern: "^0x[0-9a-f]{64}$" });
const Decision = t.Union([t.Literal("ALLOWED"), t.Literal("DENIED")]);
const RuleId = t.Union([t.String({ maxLength: 64 }), t.Null()]);

/** The most cases one test run or stored suite may hold. */
export const MAX_CASES = 500;

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

/** One case of a policy test: the input (and calling key), and what the policy must answer. */
export const TestCase = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 200 }),
    input: ProtectInput,
    key_id: t.Optional(t.String({ pattern: "^key_[A-Za-z0-9]{1,64}$" })),
    usage: t.Optional(
      t.Record(t.String({ pattern: "^[a-z0-9][a-z0-9_.-]{0,63}$" }), t.Number({ minimum: 0, maximum: 1e15 }), {
        maxProperties: 50,
        description: "a usage rule's total in its window before the case (by rule id; 0 when left out)",
      }),
    ),
    expect: t.Object(
      {
        decision: Decision,
        reason: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
        rule: t.Optional(RuleId),
        approval_required: t.Optional(t.Boolean({ description: "whether a require_approval rule decides (the decision is then DENIED)" })),
      },
      strict,
    ),
  },
  strict,
);
export type TestCase = Static<typeof TestCase>;
export const TestCases = t.Array(TestCase, { maxItems: MAX_CASES });

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

/** 422 policy_tests_failed: the error body plus every case's result. */
export const TestsFailed = t.Object({ ok: t.Literal(false), error: t.Literal("policy_tests_failed"), message: t.String(), request_id: t.String(), results: t.Array(CaseResult) });

export const ImpactBody = t.Object({ document: PolicyDocument, limit: t.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })) }, strict);

const Outcome = t.Object({ decision: Decision, reason: t.String() });
export const ImpactReport = t.Object({
  ok: t.Literal(true),
  evaluated: Type.Integer(),
  unchanged: Type.Integer(),
  changed: Type.Integer(),
  allowed_to_denied: Type.Integer(),
  denied_to_allowed: Type.Integer(),
  approval_required: Type.Integer({ description: "how many of the decisions evaluated a require_approval rule of the draft would have held for people" }),
  approval_required_by_day: t.Array(t.Object({ day: t.String({ description: "UTC day, YYYY-MM-DD" }), count: Type.Integer() })),
  examples: t.Array(t.Object({ receipt_id: t.String(), input: ProtectInput, before: Outcome, after: Outcome })),
});
