// The decisions every peer must give as warden does before it is timed: each preset, and inputs
// at the payment-limit policy's edges, asked by each of its keys (the invoicing bot's, the
// support bot's, and one it does not name); and how a warden input is asked of each peer.
import { PRESETS } from "../../../src/simulation/presets.ts";
import type { ProtectInput } from "../../../src/decide/policy.ts";

/** The keys of docs/policy.md's payment-limit policy, as its translations in bench/peers/ name them. */
export const DOC_KEYS = { invoicing: "key_3kR8yZ0a1B2c3D4e5F6g7H", support: "key_9xQ2wE4r6T8y0U1i3O5p7A" } as const;
export type Caller = "invoicing" | "support" | "other";
export const CALLERS: Caller[] = ["invoicing", "support", "other"];
/** A key id no rule names, for the peers (warden's is a third key of the tenant). */
export const OTHER_KEY = "key_0aB1cD2eF3gH4iJ5kL6mN7";

export interface Case {
  name: string;
  caller: Caller;
  /** A preset's name, for warden's simulate; its input for everything else. */
  preset?: string;
  input: ProtectInput;
}

const pay = (action: string, amount: number | undefined, currency: string | undefined): ProtectInput => ({
  action,
  resource: "vendor/acme",
  ...(amount === undefined ? {} : { amount }),
  ...(currency === undefined ? {} : { currency }),
});

/** Inputs at the policy's edges: its limits, currencies, a missing field, the other bot's action. */
const EDGES: Record<string, ProtectInput> = {
  "send 250 EUR": pay("payment.send", 250, "EUR"),
  "send 5000 EUR": pay("payment.send", 5000, "EUR"),
  "send 5000.01 EUR": pay("payment.send", 5000.01, "EUR"),
  "send 0.5 EUR": pay("payment.send", 0.5, "EUR"),
  "send 250 USD": pay("payment.send", 250, "USD"),
  "send 250, no currency": pay("payment.send", 250, undefined),
  "send EUR, no amount": pay("payment.send", undefined, "EUR"),
  "refund 50 EUR": pay("payment.refund", 50, "EUR"),
  "refund 12.5 USD": pay("payment.refund", 12.5, "USD"),
  "refund 50.01 USD": pay("payment.refund", 50.01, "USD"),
  "refund 20 GBP": pay("payment.refund", 20, "GBP"),
  "refund 10, no currency": pay("payment.refund", 10, undefined),
  "payment.sendx 10 EUR": pay("payment.sendx", 10, "EUR"),
};

export const EDGE_COUNT = Object.keys(EDGES).length;

export function cases(): Case[] {
  const out: Case[] = [];
  for (const caller of CALLERS) {
    for (const [name, preset] of Object.entries(PRESETS)) out.push({ name: `preset ${name}`, caller, preset: name, input: preset.input });
    for (const [name, input] of Object.entries(EDGES)) out.push({ name, caller, input });
  }
  return out;
}

/** The input every target is timed on: the invoicing bot pays 250 EUR (ALLOWED by the first rule). */
export const TIMED: { caller: Caller; input: ProtectInput } = { caller: "invoicing", input: EDGES["send 250 EUR"] };

/** Cerbos's CheckResources body for an input: the key is the principal, amount and currency the resource's attributes. */
export function cerbosBody(keyId: string, input: ProtectInput): unknown {
  const attr: Record<string, unknown> = {};
  if (input.amount !== undefined) attr.amount = input.amount;
  if (input.currency !== undefined) attr.currency = input.currency;
  return {
    requestId: "bench",
    principal: { id: keyId, roles: ["bot"] },
    resources: [{ actions: [input.action], resource: { kind: "agent_request", id: input.resource ?? "-", attr } }],
  };
}

/** The body of the minimal servers in front of Cedar and Casbin (scripts/bench/peers/https.ts). */
export const wrapperBody = (keyId: string, input: ProtectInput) => ({ principal: keyId, input });
