// The shape of a policy test case (docs/api.md, Policy): plain TypeBox with no server import, so
// the service validates cases with it and the console's editor checks and completes them with the
// very same schema.
import { Type, type Static } from "@sinclair/typebox";
import { ProtectInput } from "../decide/policy.ts";
import { InlineEntities } from "../decide/entities.ts";

const strict = { additionalProperties: false } as const;
export const Decision = Type.Union([Type.Literal("ALLOWED"), Type.Literal("DENIED")]);
export const RuleId = Type.Union([Type.String({ maxLength: 64 }), Type.Null()]);

/** The most cases one test run or stored suite may hold. */
export const MAX_CASES = 500;

/** One case of a policy test: the input (and calling key), and what the policy must answer. */
export const TestCase = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    input: ProtectInput,
    key_id: Type.Optional(Type.String({ pattern: "^key_[A-Za-z0-9]{1,64}$" })),
    usage: Type.Optional(
      Type.Record(Type.String({ pattern: "^[a-z0-9][a-z0-9_.-]{0,63}$" }), Type.Number({ minimum: 0, maximum: 1e15 }), {
        maxProperties: 50,
        description: "a usage rule's total in its window before the case (by rule id; 0 when left out)",
      }),
    ),
    entities: Type.Optional(InlineEntities),
    expect: Type.Object(
      {
        decision: Decision,
        reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        rule: Type.Optional(RuleId),
        approval_required: Type.Optional(Type.Boolean({ description: "whether a require_approval rule decides (the decision is then DENIED)" })),
      },
      strict,
    ),
  },
  strict,
);
export type TestCase = Static<typeof TestCase>;
export const TestCases = Type.Array(TestCase, { maxItems: MAX_CASES });
