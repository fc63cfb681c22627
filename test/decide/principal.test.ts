// Who asks through a remote MCP gateway (docs/policy.md, "Who asks: principal"): the paths
// principal.role, principal.client_id and principal.gateway, the payload that names the person,
// the agent and the gateway, and deciding such a payload again from itself alone.
import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { decideAgain } from "../../src/decide/again.ts";
import { decide } from "../../src/decide/engine.ts";
import { buildPayload } from "../../src/decide/payload.ts";
import { callerOf, payloadPrincipal, PolicyDocument, type GatewayCaller } from "../../src/decide/policy.ts";

const POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "viewers_do_not_pay", effect: "deny", reason: "viewers_do_not_pay", when: { actions: ["mcp.billing.pay"], where: { "principal.role": { eq: "viewer" } } } },
    { id: "our_agent_only", effect: "deny", reason: "unknown_agent", when: { actions: ["mcp.billing.pay"], where: { "principal.client_id": { ne: "https://agent.example/c.json" } } } },
    { id: "through_billing", effect: "allow", reason: "through_billing", when: { actions: ["mcp.billing.pay"], where: { "principal.gateway": { eq: "billing" } } } },
  ],
} as const;

const VIA: GatewayCaller = { account_id: "acct_1", member_id: "mbr_1", role: "owner", client_id: "https://agent.example/c.json", gateway_id: "gw_1", gateway: "billing" };
const INPUT = { action: "mcp.billing.pay", context: { amount: 5 } };

describe("principal paths", () => {
  test("the policy language accepts them", () => {
    expect(Value.Check(PolicyDocument, POLICY)).toBe(true);
    const unknown = { ...POLICY, rules: [{ id: "x", effect: "deny", reason: "x", when: { where: { "principal.email": { eq: "a" } } } }] };
    expect(Value.Check(PolicyDocument, unknown)).toBe(false);
  });

  test("role, client and gateway decide", () => {
    const doc = POLICY as unknown as PolicyDocument;
    expect(decide(INPUT, doc, callerOf(payloadPrincipal(doc, "key_1", VIA))).reasons).toEqual(["through_billing"]);
    expect(decide(INPUT, doc, callerOf(payloadPrincipal(doc, "key_1", { ...VIA, role: "viewer" }))).reasons).toEqual(["viewers_do_not_pay"]);
    expect(decide(INPUT, doc, callerOf(payloadPrincipal(doc, "key_1", { ...VIA, client_id: "https://other.example" }))).reasons).toEqual(["unknown_agent"]);
    // A caller that is not a gateway's has none of them: no condition on them holds (not even ne).
    expect(decide(INPUT, doc, { key_id: "key_1" }).reasons).toEqual(["no_rule_matched"]);
  });

  test("the payload names the person, the agent and the gateway, and decides again from itself", () => {
    const doc = POLICY as unknown as PolicyDocument;
    const viewer = { ...VIA, role: "viewer" };
    const principal = payloadPrincipal(doc, "key_1", viewer);
    const verdict = decide(INPUT, doc, callerOf(principal));
    const payload = buildPayload({ kind: "protect", input: INPUT, policy: { policy_id: "p", version: 1, hash: `0x${"0".repeat(64)}` }, decision: verdict.decision, reasons: verdict.reasons, rule: verdict.rule, principal });
    expect(payload.principal).toEqual({ key_id: "key_1", ...viewer });
    const again = decideAgain(JSON.parse(JSON.stringify(payload)), doc)!;
    expect(again).toMatchObject({ decision: "DENIED", matches: true });
    // A payload whose role was changed decides otherwise: the check would catch the edit.
    const edited = { ...payload, principal: { ...payload.principal, role: "owner" } };
    expect(decideAgain(edited, doc)!.matches).toBe(false);
  });
});
