// require_approval in the policy language (docs/policy.md, "Approvals"): the document check refuses
// terms out of bounds with their JSON path; simulate, policy tests and impact know the effect.
import { beforeAll, describe, expect, test } from "bun:test";
import { bearer } from "../helpers/accounts.ts";
import { protect, setPlan } from "../helpers/customer.ts";
import { call, expectErrorShape, signup } from "../helpers/service.ts";
import { decide } from "../../src/decide/engine.ts";
import { APPROVAL_DEFAULTS, type PolicyDocument } from "../../src/decide/policy.ts";

const rule = (approval?: unknown, effect = "require_approval") => ({ id: "held", effect, reason: "held_for_people", when: { actions: ["refund.issue"] }, ...(approval === undefined ? {} : { approval }) });
const doc = (...rules: unknown[]) => ({ default_effect: "deny", default_reason: "no_rule_matched", rules });

let owner: Awaited<ReturnType<typeof signup>>;
beforeAll(async () => {
  owner = await signup();
  await setPlan(owner.tenantId, "pro");
});

const publish = (document: unknown) => call("PUT", "/customer/policy", { json: { document }, headers: bearer(owner.token) });

describe("the document check", () => {
  test.each([
    [{ quorum: 0 }, "body/document/rules/0/approval/quorum"],
    [{ quorum: 6 }, "body/document/rules/0/approval/quorum"],
    [{ roles: ["boss"] }, "body/document/rules/0/approval/roles/0"],
    [{ roles: [] }, "body/document/rules/0/approval/roles"],
    [{ expires_in: 59 }, "body/document/rules/0/approval/expires_in"],
    [{ expires_in: 604_801 }, "body/document/rules/0/approval/expires_in"],
    [{ execute_within: 59 }, "body/document/rules/0/approval/execute_within"],
    [{ execute_within: 86_401 }, "body/document/rules/0/approval/execute_within"],
    [{ quorum: 1, unknown: true }, "body/document/rules/0/approval"],
  ])("terms %j are refused at %s", async (terms, path) => {
    const reply = await publish(doc(rule(terms)));
    expectErrorShape(reply, 400, "invalid_request");
    expect(reply.body.message.startsWith(path)).toBe(true);
  });

  test("terms belong to a require_approval rule only; the default may not require approval", async () => {
    const onAllow = await publish(doc(rule({ quorum: 2 }, "allow")));
    expectErrorShape(onAllow, 400, "invalid_request");
    expect(onAllow.body.message).toStartWith("body/document/rules/0/approval: ");
    const byDefault = await publish({ ...doc(), default_effect: "require_approval" });
    expectErrorShape(byDefault, 400, "invalid_request");
    expect(byDefault.body.message).toStartWith("body/document/default_effect");
  });

  test("terms within bounds publish; left out, the defaults apply", async () => {
    expect((await publish(doc(rule({ quorum: 5, roles: ["approver", "owner"], expires_in: 60, execute_within: 86_400 })))).status).toBe(200);
    const verdict = decide({ action: "refund.issue" }, doc(rule()) as PolicyDocument);
    expect(verdict).toEqual({ decision: "DENIED", reasons: ["held_for_people"], rule: "held", approval: { ...APPROVAL_DEFAULTS } });
    // Roles are in a fixed order, whatever order the rule lists them in: what receipts carry does not depend on it.
    expect(decide({ action: "refund.issue" }, doc(rule({ roles: ["approver", "owner"] })) as PolicyDocument).approval?.roles).toEqual(["owner", "approver"]);
  });
});

describe("simulate, tests and impact", () => {
  test("simulate reports the DENIED decision and approval_required, and counts nothing", async () => {
    const reply = await call("POST", "/v1/simulate", { json: { input: { action: "refund.issue" }, document: doc(rule({ quorum: 2 })) }, headers: bearer(owner.token) });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ decision: "DENIED", approval_required: true, reasons: ["held_for_people"] });
    expect(reply.body.payload.requires_approval.quorum).toBe(2);
    const plain = await call("POST", "/v1/simulate", { json: { input: { action: "document.read" }, document: doc(rule()) }, headers: bearer(owner.token) });
    expect(plain.body.approval_required).toBe(false);
    expect(plain.body.payload.requires_approval).toBeUndefined();
  });

  test("a policy test case may expect approval_required", async () => {
    const cases = [
      { name: "held", input: { action: "refund.issue" }, expect: { decision: "DENIED", approval_required: true } },
      { name: "wrongly free", input: { action: "refund.issue" }, expect: { decision: "DENIED", approval_required: false } },
      { name: "plain deny", input: { action: "x.y" }, expect: { decision: "DENIED", approval_required: false } },
    ];
    const reply = await call("POST", "/customer/policy/test", { json: { document: doc(rule()), cases }, headers: bearer(owner.token) });
    expect(reply.body.results.map((r: { passed: boolean; approval_required?: true }) => [r.passed, r.approval_required ?? false])).toEqual([
      [true, true],
      [false, true],
      [true, false],
    ]);
  });

  test("impact counts, per day, the recorded decisions the draft would have held for approval", async () => {
    expect((await publish(doc({ id: "refunds", effect: "allow", reason: "ok", when: { actions: ["refund.issue"] } }))).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await protect(owner.apiKey, { action: "refund.issue", amount: 10 * i })).status).toBe(200);
    const reply = await call("POST", "/customer/policy/impact", { json: { document: doc(rule()) }, headers: bearer(owner.token) });
    expect(reply.body.approval_required).toBe(3);
    expect(reply.body.approval_required_by_day).toEqual([{ day: new Date().toISOString().slice(0, 10), count: 3 }]);
    expect(reply.body.allowed_to_denied).toBe(3);
  });
});
