// Shapes of stored receipts and of the /customer/receipts routes (docs/api.md, Receipts and the receipt log).
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { ResultPayload } from "../decide/payload.ts";
import { OutcomePayload, VotePayload } from "./approval-payload.ts";

const Hash = t.String({ pattern: "^0x[0-9a-f]{64}$" });
const Decision = t.Union([t.Literal("ALLOWED"), t.Literal("DENIED")]);
const strict = { additionalProperties: false } as const;

const Signature = t.String({ description: "compact JWS (EdDSA) over the JCS form of {v: 2, receipt_id, tenant_id, key_id, kind, request_id, timestamp, content_hash, protect_receipt_id}" });
const ChainHash = t.String({ pattern: "^0x[0-9a-f]{64}$", description: "hex SHA-256 of the JCS form of the signed claims plus prev and seq" });

/** A stored decision as every route shows it; protect and execute results add ok and verified. */
export const Receipt = t.Object({
  receipt_id: t.String({ pattern: "^rcpt_" }),
  tenant_id: t.String(),
  kind: t.Union([t.Literal("protect"), t.Literal("execute")]),
  seq: Type.Integer({ minimum: 0 }),
  prev_hash: t.Union([Hash, t.Null()]),
  chain_hash: ChainHash,
  key_id: t.String(),
  protect_receipt_id: t.Union([t.String(), t.Null()]),
  decision: Decision,
  request_id: t.String(),
  content_hash: Hash,
  timestamp: t.String({ format: "date-time" }),
  reasons: t.Array(t.String()),
  payload: ResultPayload,
  signature: Signature,
});

/** The payload of an audit event (src/receipts/event.ts): what its content_hash covers. */
export const EventPayload = t.Object({
  v: t.Literal(2),
  kind: t.Literal("event"),
  event: t.String({ description: "what happened: member.invited, key.revoked, policy.published, ... (docs/api.md, \"The audit trail\")" }),
  actor: t.Union([t.Object({ member_id: t.String() }), t.Object({ operator: t.String() })], { description: "who: a member of the tenant, or an operator" }),
  target: t.Record(t.String(), t.Unknown(), { description: "what the change was made to: ids and the new values" }),
  at: t.String({ format: "date-time", description: "when the change happened" }),
});

/** A stored audit event: a receipt of kind event, in the same log, chain and Merkle tree as decisions; no key, no decision. */
export const EventReceipt = t.Object({
  receipt_id: t.String({ pattern: "^rcpt_" }),
  tenant_id: t.String(),
  kind: t.Literal("event"),
  seq: Type.Integer({ minimum: 0 }),
  prev_hash: t.Union([Hash, t.Null()]),
  chain_hash: ChainHash,
  key_id: t.Null(),
  protect_receipt_id: t.Null(),
  decision: t.Null(),
  request_id: t.String(),
  content_hash: Hash,
  timestamp: t.String({ format: "date-time" }),
  payload: EventPayload,
  signature: Signature,
});

/** A member's vote on an approval (docs/api.md, "Approvals"): no key, no decision; names the approval's protect receipt. */
export const VoteReceipt = t.Object({
  receipt_id: t.String({ pattern: "^rcpt_" }),
  tenant_id: t.String(),
  kind: t.Literal("vote"),
  seq: Type.Integer({ minimum: 0 }),
  prev_hash: t.Union([Hash, t.Null()]),
  chain_hash: ChainHash,
  key_id: t.Null(),
  protect_receipt_id: t.String({ pattern: "^rcpt_" }),
  decision: t.Null(),
  request_id: t.String(),
  content_hash: Hash,
  timestamp: t.String({ format: "date-time" }),
  payload: VotePayload,
  signature: Signature,
});

/** An approval's outcome: ALLOWED (approved) or DENIED (denied, expired, cancelled), for the key that asked. */
export const OutcomeReceipt = t.Object({
  receipt_id: t.String({ pattern: "^rcpt_" }),
  tenant_id: t.String(),
  kind: t.Literal("approval"),
  seq: Type.Integer({ minimum: 0 }),
  prev_hash: t.Union([Hash, t.Null()]),
  chain_hash: ChainHash,
  key_id: t.String(),
  protect_receipt_id: t.String({ pattern: "^rcpt_" }),
  decision: Decision,
  request_id: t.String(),
  content_hash: Hash,
  timestamp: t.String({ format: "date-time" }),
  payload: OutcomePayload,
  signature: Signature,
});

/** Any receipt of the log: a decision, an audit event, or a step of an approval. */
export const StoredReceipt = t.Union([Receipt, EventReceipt, VoteReceipt, OutcomeReceipt]);

export const ReceiptList = t.Object({ ok: t.Literal(true), receipts: t.Array(StoredReceipt), next_cursor: t.Union([t.String(), t.Null()]) });
export const OneReceipt = t.Object({ ok: t.Literal(true), receipt: StoredReceipt });

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
  /** The same tree head as a C2SP checkpoint (c2sp.org/tlog-checkpoint) in a signed note. */
  note: t.String({ description: "C2SP signed note: `<origin>\\n<tree_size>\\n<base64 root>\\n`, a blank line, an Ed25519 signature line under the origin" }),
  note_verifier_key: t.String({ description: "The note's verifier key: `<origin>+<8 hex key id>+<base64 of 0x01 and the public key>`" }),
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
