// Shapes of GET/PUT /customer/policy (contract section 3; the language: docs/policy.md).
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { PolicyDocument } from "../simulation/policy.ts";

export const PutPolicyBody = t.Object({ document: PolicyDocument }, { additionalProperties: false });

export const PolicyResponse = t.Object({
  ok: t.Literal(true),
  policy_id: t.String({ pattern: "^pol_" }),
  version: Type.Integer({ minimum: 1 }),
  hash: t.String({ pattern: "^0x[0-9a-f]{64}$" }),
  document: PolicyDocument,
});
