// Request and response shapes of /v1/simulate and /v1/presets (contract sections 3 and 4).
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ProtectInput } from "./policy.ts";

export const SimulateBody = t.Object({ preset: t.String({ maxLength: 100 }) }, { additionalProperties: false });

const Decision = t.Union([t.Literal("ALLOWED"), t.Literal("DENIED")]);
const Hash = t.String({ pattern: "^0x[0-9a-f]{64}$" });

export const PolicyRef = t.Object({ policy_id: t.String(), version: Type.Integer({ minimum: 1 }), hash: Hash });

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
  preset: t.String(),
  reasons: t.Array(t.String()),
  payload: ResultPayload,
  signature: t.String(),
});

export const PresetList = t.Object({
  ok: t.Literal(true),
  presets: t.Array(t.Object({ preset: t.String(), description: t.String(), input: ProtectInput })),
});
