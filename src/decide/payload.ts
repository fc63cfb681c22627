// The payload of a decision: what content_hash covers, and its schema as responses show it.
import { Type } from "@sinclair/typebox";
import type { Decision } from "./engine.ts";
import { EntityReadSchema, type EntityRead } from "./entities.ts";
import { ApprovalTerms, ProtectInput, type DraftRef, type PayloadPrincipal, type PolicyRef, type ResolvedTerms } from "./policy.ts";

export type PayloadKind = "simulation" | "protect" | "execute";

/**
 * An execute payload must follow its protect within this many minutes (by the two receipts' own
 * timestamps). The rule is receipt_execute_window() in SQL; this names it in messages and docs,
 * and test/db/append.sql.test.ts checks that the two agree.
 */
export const EXECUTE_WINDOW_MINUTES = 15;

export type ResultPayload = {
  v: 2;
  kind: PayloadKind;
  input: ProtectInput;
  policy: PolicyRef | DraftRef;
  decision: Decision;
  reasons: string[];
  /** The id of the rule that decided; null for the policy's default. */
  rule: string | null;
  /** The calling key, only when it was a fact of the decision (a rule with a `keys` condition); through a remote gateway always, with who asked. */
  principal?: PayloadPrincipal;
  preset?: string;
  /** The terms under which people may approve the action: the rule that decided is require_approval. */
  requires_approval?: ResolvedTerms;
  /** An execute of an approved action: the approval and its outcome receipt (ALLOWED). */
  outcome?: { approval_id: string; receipt_id: string };
  /** The usage facts the decision read (docs/policy.md, "Budgets and rate windows"): deciding again with them gives the same answer. */
  usage?: { rule: string; window_start: string; before: number }[];
  /** The stored attributes the decision read (docs/policy.md, "Entities and attributes"): deciding again with them gives the same answer. */
  entities?: EntityRead[];
};

// The deterministic part of a result (docs/api.md, POST /v1/simulate): content_hash covers exactly this, so
// nothing per-request (request id, time, tenant) may enter it, nor the key unless it decided.
export function buildPayload(args: Omit<ResultPayload, "v">): ResultPayload {
  const { kind, input, policy, decision, reasons, rule, principal, preset, requires_approval, outcome, usage, entities } = args;
  // Copy only the three reference fields: a whole policy row must not leak into the hash.
  const ref = { policy_id: policy.policy_id, version: policy.version, hash: policy.hash } as PolicyRef | DraftRef;
  const payload: ResultPayload = { v: 2, kind, input, policy: ref, decision, reasons, rule };
  // Absent rather than undefined or null, so the hash does not depend on how "none" is spelt.
  if (principal !== undefined) {
    payload.principal = { key_id: principal.key_id };
    // Through a remote gateway: the person, the agent and the gateway, each named field copied.
    for (const f of GATEWAY_FIELDS) if (principal[f] !== undefined) payload.principal[f] = principal[f];
  }
  if (preset !== undefined) payload.preset = preset;
  if (requires_approval !== undefined) {
    const t = requires_approval;
    payload.requires_approval = { quorum: t.quorum, roles: [...t.roles], expires_in: t.expires_in, execute_within: t.execute_within };
  }
  if (outcome !== undefined) payload.outcome = { approval_id: outcome.approval_id, receipt_id: outcome.receipt_id };
  if (usage !== undefined && usage.length > 0) payload.usage = usage.map((u) => ({ rule: u.rule, window_start: u.window_start, before: u.before }));
  // Only when some attribute was read: payloads of policies without entity conditions keep their hash.
  if (entities !== undefined && entities.length > 0) {
    // Each read's members in JCS order, so canonicalJson() writes them as they are.
    payload.entities = entities.map((r) => ({ attribute: r.attribute, entity: r.entity, id: r.id, type: r.type, value: Array.isArray(r.value) ? [...r.value] : r.value, version: r.version }));
  }
  return payload;
}

const GATEWAY_FIELDS = ["account_id", "member_id", "role", "client_id", "gateway_id", "gateway"] as const;

const Hash = Type.String({ pattern: "^0x[0-9a-f]{64}$" });

/** A policy reference in a payload; a draft simulated with a session is `{policy_id: "draft", version: null, hash}`. */
const PolicyRefSchema = Type.Object({ policy_id: Type.String(), version: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]), hash: Hash });

/** The payload as responses and stored receipts show it. */
export const ResultPayload = Type.Object({
  v: Type.Literal(2),
  kind: Type.Union([Type.Literal("simulation"), Type.Literal("protect"), Type.Literal("execute")]),
  input: ProtectInput,
  policy: PolicyRefSchema,
  decision: Type.Union([Type.Literal("ALLOWED"), Type.Literal("DENIED")]),
  reasons: Type.Array(Type.String()),
  rule: Type.Union([Type.String(), Type.Null()], { description: "id of the rule that decided; null for the policy's default" }),
  principal: Type.Optional(
    Type.Object(
      {
        key_id: Type.Union([Type.String(), Type.Null()]),
        account_id: Type.Optional(Type.String({ description: "through a remote MCP gateway: the person's account" })),
        member_id: Type.Optional(Type.String({ description: "through a remote MCP gateway: the person's membership of the tenant" })),
        role: Type.Optional(Type.String({ description: "through a remote MCP gateway: the person's role (principal.role)" })),
        client_id: Type.Optional(Type.String({ description: "through a remote MCP gateway: the agent, its OAuth client id (principal.client_id)" })),
        gateway_id: Type.Optional(Type.String({ description: "through a remote MCP gateway: the gateway's id" })),
        gateway: Type.Optional(Type.String({ description: "through a remote MCP gateway: the gateway's name (principal.gateway)" })),
      },
      {
        description:
          "the calling key (null: a session), present when a rule of the policy version reads it (a keys condition, or principal.key_id in a where), and always for a call through a remote MCP gateway, with the person, the agent and the gateway",
      },
    ),
  ),
  preset: Type.Optional(Type.String()),
  requires_approval: Type.Optional(Type.Required(ApprovalTerms, { description: "the rule that decided holds the action for approval by people, under these terms (defaults filled in)" })),
  usage: Type.Optional(
    Type.Array(Type.Object({ rule: Type.String(), window_start: Type.String(), before: Type.Number() }), {
      description: "the usage facts the decision read: each usage condition reached, its window and the total before this request",
    }),
  ),
  entities: Type.Optional(
    Type.Array(EntityReadSchema, {
      description:
        "the stored attributes the decision read, in the order it read them: the entity (subject or resource, its type and id), the attribute, its value (null: absent) and the entity's version (null: not stored); present only when a condition read one",
    }),
  ),
  outcome: Type.Optional(
    Type.Object({ approval_id: Type.String({ pattern: "^apv_" }), receipt_id: Type.String({ pattern: "^rcpt_" }) }, { description: "an execute of an approved action: the approval and its outcome receipt" }),
  ),
});
