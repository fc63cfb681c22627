// A recorded decision made again from its payload alone (docs/api.md, "POST /v1/verify"): the
// input, the key it names, the usage facts and the stored attributes it read, under the policy
// document it names. Pure, as decide() is: the server's verify and the offline verifiers (given
// the document) share it.
import { Value } from "@sinclair/typebox/value";
import { canonicalJson } from "../crypto/canonical.ts";
import { decide, type Decision } from "./engine.ts";
import { factsFromReads, readsOf } from "./entities.ts";
import { callerOf, ProtectInput, type PayloadPrincipal, type PolicyDocument } from "./policy.ts";

type Fields = Record<string, unknown>;
const isObject = (v: unknown): v is Fields => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * The decision of `payload` made again under `document`: what it decides and whether the payload
 * says exactly that (the usage facts and attributes read, reasons, rule and approval terms);
 * undefined when the payload holds no protect input. An execute of an approved action (a payload
 * with an `outcome`) is ALLOWED on the strength of that outcome, which the caller checks.
 */
export function decideAgain(payload: unknown, document: PolicyDocument): { decision: Decision; heldForApproval: boolean; matches: boolean } | undefined {
  if (!isObject(payload)) return undefined;
  const { input } = payload;
  if (!Value.Check(ProtectInput, input)) return undefined;
  // Under a version with a keys condition the payload names the key that asked, and that key decides
  // again; through a remote gateway also the person's role, the agent and the gateway.
  const principal = payload.principal;
  const named = isObject(principal) ? (Object.fromEntries(Object.entries(principal).filter(([, v]) => typeof v === "string")) as Partial<PayloadPrincipal>) : undefined;
  const caller = callerOf(named ? { key_id: null, ...named } : undefined);
  // Usage conditions decide on the facts the payload names (the counters' totals it read).
  const facts = Array.isArray(payload.usage)
    ? new Map((payload.usage as unknown[]).filter(isObject).map((u) => [String(u.rule), { window_start: String(u.window_start), before: Number(u.before) }]))
    : undefined;
  // Attribute conditions decide on the stored attributes the payload names (only those read are needed).
  const entities = factsFromReads(input, readsOf(payload.entities));
  const again = decide(input, document, caller, facts, entities);
  const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);
  const matches =
    same(again.usage, payload.usage) &&
    same(again.entities, payload.entities) &&
    // The rule named must be the one that decides again (payloads without one name none).
    again.rule === (payload.rule ?? null) &&
    // A require_approval rule names its terms.
    same(again.approval, payload.requires_approval) &&
    canonicalJson(again.reasons) === canonicalJson(payload.reasons);
  return { decision: again.decision, heldForApproval: again.approval !== undefined, matches };
}
