// Request and response shapes of /v1/simulate and /v1/presets (docs/api.md, Simulation).
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ResultPayload } from "../decide/payload.ts";
import { PolicyDocument, ProtectInput } from "../decide/policy.ts";
import { InlineEntities } from "../decide/entities.ts";

// `preset` or `input`, not both (checked in the route: a union would blur the error's path).
export const SimulateBody = t.Object(
  {
    preset: t.Optional(t.String({ maxLength: 100 })),
    input: t.Optional(ProtectInput),
    policy_version: t.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
    document: t.Optional(PolicyDocument),
    entities: t.Optional(InlineEntities),
  },
  { additionalProperties: false },
);

const Decision = t.Union([t.Literal("ALLOWED"), t.Literal("DENIED")]);
const Hash = t.String({ pattern: "^0x[0-9a-f]{64}$" });

// The service never vouches for its own answer: whoever holds a result checks it against the JWKS.
export const ServedVerified = t.Boolean({
  description:
    "false on every result the service sends: it does not vouch for its own answer. Check the result yourself: `warden verify FILE` offline (recomputes content_hash, checks the signature against the JWKS; prints verified: true when both hold), `warden simulate --verify`, or POST /v1/verify",
});

export const SimulationResult = t.Object({
  ok: t.Literal(true),
  verified: ServedVerified,
  decision: Decision,
  request_id: t.String(),
  content_hash: Hash,
  timestamp: t.String({ format: "date-time" }),
  preset: t.Union([t.String(), t.Null()], { description: "the preset simulated; null for an input" }),
  reasons: t.Array(t.String()),
  approval_required: t.Boolean({ description: "a require_approval rule decided: a protect would open an approval (docs/api.md, \"Approvals\")" }),
  action_allowable: t.Boolean({
    description:
      "false when the policy denies this action whatever the rest of the input (resource, amount, currency, context) says, with no approval to ask for; true when some input with this action could be ALLOWED or held for approval (conservatively: a rule that allows it under any condition counts)",
  }),
  payload: ResultPayload,
  // The signed claims the fields above do not already show, so a saved result verifies alone.
  tenant_id: t.String(),
  key_id: t.Union([t.String(), t.Null()], { description: "the calling API key; null when a session (JWT) called" }),
  receipt_id: t.Null({ description: "simulations are not stored" }),
  protect_receipt_id: t.Null(),
  kind: t.Literal("simulation"),
  signature: t.String({ description: "compact JWS (EdDSA) over the JCS form of {v: 2, receipt_id, tenant_id, key_id, kind, request_id, timestamp, content_hash, protect_receipt_id}" }),
});

export const PresetList = t.Object({
  ok: t.Literal(true),
  presets: t.Array(t.Object({ preset: t.String(), description: t.String(), input: ProtectInput })),
});
