// Shapes of stored receipts and of the /customer/receipts routes (contract sections 3 and 4).
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ResultPayload } from "../simulation/model.ts";

const Hash = t.String({ pattern: "^0x[0-9a-f]{64}$" });
const Decision = t.Union([t.Literal("ALLOWED"), t.Literal("DENIED")]);
const strict = { additionalProperties: false } as const;

/** A stored receipt as every route shows it; protect and execute results add ok and verified. */
export const Receipt = t.Object({
  receipt_id: t.String({ pattern: "^rcpt_" }),
  tenant_id: t.String(),
  kind: t.Union([t.Literal("protect"), t.Literal("execute")]),
  seq: Type.Integer({ minimum: 0 }),
  prev_hash: t.Union([Hash, t.Null()]),
  chain_hash: t.String({ pattern: "^0x[0-9a-f]{64}$", description: "hex SHA-256 of the JCS form of the signed claims plus prev and seq" }),
  key_id: t.String(),
  protect_receipt_id: t.Union([t.String(), t.Null()]),
  decision: Decision,
  request_id: t.String(),
  content_hash: Hash,
  timestamp: t.String({ format: "date-time" }),
  reasons: t.Array(t.String()),
  payload: ResultPayload,
  signature: t.String({ description: "compact JWS (EdDSA) over the JCS form of {v: 2, receipt_id, tenant_id, key_id, kind, request_id, timestamp, content_hash, protect_receipt_id}" }),
});

export const ReceiptList = t.Object({ ok: t.Literal(true), receipts: t.Array(Receipt), next_cursor: t.Union([t.String(), t.Null()]) });
export const OneReceipt = t.Object({ ok: t.Literal(true), receipt: Receipt });

export const ListQuery = t.Object(
  {
    limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1, default: 50 })),
    cursor: t.Optional(t.String({ maxLength: 200 })),
  },
  strict,
);
export const ProofQuery = t.Object({ tree_size: t.Optional(t.Numeric({ minimum: 1, multipleOf: 1 })) }, strict);
export const ConsistencyQuery = t.Object({ from: t.Numeric({ minimum: 1, multipleOf: 1 }), to: t.Optional(t.Numeric({ minimum: 1, multipleOf: 1 })) }, strict);
export const ReceiptParams = t.Object({ receipt_id: t.String() });

export const Checkpoint = t.Object({
  ok: t.Literal(true),
  tenant_id: t.String(),
  tree_size: Type.Integer({ minimum: 0 }),
  root_hash: Hash,
  timestamp: t.String({ format: "date-time" }),
  signature: t.String(),
});
export const InclusionProof = t.Object({
  ok: t.Literal(true),
  receipt_id: t.String(),
  seq: Type.Integer({ minimum: 0 }),
  tree_size: Type.Integer({ minimum: 1 }),
  leaf_hash: Hash,
  path: t.Array(Hash),
});
export const ConsistencyProof = t.Object({ ok: t.Literal(true), from: Type.Integer({ minimum: 1 }), to: Type.Integer({ minimum: 1 }), path: t.Array(Hash) });

/** A JWK of /.well-known/jwks.json. */
export const PublishedKey = t.Object({
  kid: t.String(),
  kty: t.Literal("OKP"),
  crv: t.Literal("Ed25519"),
  x: t.String(),
  alg: t.Optional(t.Literal("EdDSA")),
  use: t.Optional(t.Literal("sig")),
  compromised_since: t.Optional(
    t.String({
      format: "date-time",
      description: "the key was revoked as compromised: its signatures whose signed timestamp (or checkpoint timestamp) is at or after this instant are refused; earlier ones still verify",
    }),
  ),
});
export type PublishedKey = typeof PublishedKey.static;
