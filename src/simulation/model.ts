// Request and response shapes of /v1/simulate and /v1/presets (contract sections 3 and 4).
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { PolicyDocument, ProtectInput } from "./policy.ts";

// `preset` or `input`, not both (checked in the route: a union would blur the error's path).
export const SimulateBody = t.Object(
  {
    preset: t.Optional(t.String({ maxLength: 100 })),
    input: t.Optional(ProtectInput),
    policy_version: t.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
    document: t.Optional(PolicyDocument),
  },
  { additionalProperties: false },
);

const Decision = t.Union([t.Literal("ALLOWED"), t.Literal("DENIED")]);
const Hash = t.String({ pattern: "^0x[0-9a-f]{64}$" });

// A draft simulated with a session is `{policy_id: "draft", version: null, hash}`.
export const PolicyRef = t.Object({ policy_id: t.String(), version: t.Union([Type.Integer({ minimum: 1 }), t.Null()]), hash: Hash });

export const ResultPayload = t.Object({
  v: t.Literal(1),
  kind: t.Union([t.Literal("simulation"), t.Literal("protect"), t.Literal("execute")]),
  input: ProtectInput,
  policy: PolicyRef,
  decision: Decision,
  reasons: t.Array(t.String()),
  preset: t.Optional(t.String()),
});

export const SimulationResult = t.Object({
  ok: t.Literal(true),
  verified: t.Boolean(),
  decision: Decision,
  request_id: t.String(),
  content_hash: Hash,
  timestamp: t.String({ format: "date-time" }),
  preset: t.Union([t.String(), t.Null()], { description: "the preset simulated; null for an input" }),
  reasons: t.Array(t.String()),
  payload: ResultPayload,
  signature: t.String(),
});

export const PresetList = t.Object({
  ok: t.Literal(true),
  presets: t.Array(t.Object({ preset: t.String(), description: t.String(), input: ProtectInput })),
});
