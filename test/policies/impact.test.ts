// POST /customer/policy/impact: stored protect decisions decided again under a draft; nothing stored.
import { describe, expect, test } from "bun:test";
import { impactOf } from "../../src/policies/impact.ts";
import { bearer, LARGE_PAYMENT, protect, SMALL_PAYMENT } from "../helpers/customer.ts";
import { call, expectErrorShape, signup } from "../helpers/service.ts";

const impact = (token: string, json: unknown) => call("POST", "/customer/policy/impact", { json, headers: bearer(token) });
const READ = { action: "document.read", resource: "docs/a" };

// Denies payments, allows everything else: the opposite of the default policy on two of three inputs.
const FLIPPED = {
  default_effect: "allow",
  default_reason: "open",
  rules: [{ id: "no-payments", effect: "deny", reason: "payments_off", when: { actions: ["payment.*"] } }],
};

describe("POST /customer/policy/impact", () => {
  test("counts what the draft would change on the latest protect receipts, with examples", async () => {
    const a = await signup();
    const small = await protect(a.apiKey, SMALL_PAYMENT);
    const large = await protect(a.apiKey, LARGE_PAYMENT);
    const read = await protect(a.apiKey, READ);
    // An execute is no protect decision: it is not replayed.
    expect((await call("POST", "/v1/execute", { json: { receipt_id: small.body.receipt_id }, headers: { "x-api-key": a.apiKey } })).status).toBe(200);
    const stored = async () => (await call("GET", "/customer/receipts", { headers: bearer(a.token) })).body.receipts;
    const before = await stored();
    // The signup's key.created event, 3 protects and the execute.
    expect(before).toHaveLength(5);

    const reply = await impact(a.token, { document: FLIPPED });
    expect(reply.status).toBe(200);
    // The large payment was denied and stays denied, the read stays allowed: reasons changed, no flip.
    expect(reply.body).toMatchObject({ ok: true, evaluated: 3, unchanged: 0, changed: 3, allowed_to_denied: 1, denied_to_allowed: 0, reason_changed: 2 });
    const byId = Object.fromEntries(reply.body.examples.map((e: { receipt_id: string }) => [e.receipt_id, e]));
    expect(byId[small.body.receipt_id]).toEqual({
      receipt_id: small.body.receipt_id,
      input: SMALL_PAYMENT,
      before: { decision: "ALLOWED", reason: "payment_within_limit" },
      after: { decision: "DENIED", reason: "payments_off" },
      flipped: true,
    });
    expect(byId[large.body.receipt_id].after).toEqual({ decision: "DENIED", reason: "payments_off" });
    expect(byId[large.body.receipt_id].flipped).toBe(false);
    expect(byId[read.body.receipt_id]).toMatchObject({ before: { decision: "ALLOWED", reason: "read_only" }, after: { decision: "ALLOWED", reason: "open" }, flipped: false });

    // limit takes the newest only.
    const latest = await impact(a.token, { document: FLIPPED, limit: 1 });
    expect(latest.body).toMatchObject({ evaluated: 1, changed: 1 });
    expect(latest.body.examples[0].receipt_id).toBe(read.body.receipt_id);
    // Nothing stored: the receipts list is as it was.
    expect(await stored()).toEqual(before);
  });

  test("only the caller's receipts; none at all is an empty report", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    await protect(a.apiKey, SMALL_PAYMENT);
    const reply = await impact(b.token, { document: FLIPPED });
    expect(reply.body).toEqual({ ok: true, evaluated: 0, unchanged: 0, changed: 0, allowed_to_denied: 0, denied_to_allowed: 0, reason_changed: 0, approval_required: 0, approval_required_by_day: [], examples: [] });
  });

  test("limit 1 to 10,000; the document is required and validated", async () => {
    const a = await signup();
    for (const json of [{ document: FLIPPED, limit: 0 }, { document: FLIPPED, limit: 10_001 }, { document: FLIPPED, limit: "5" }, { limit: 5 }]) {
      expectErrorShape(await impact(a.token, json), 400, "invalid_request");
    }
    const bad = await impact(a.token, { document: { ...FLIPPED, rules: [{ ...FLIPPED.rules[0], when: { context: { x: {} } } }] } });
    expectErrorShape(bad, 400, "invalid_request");
    expect(bad.body.message).toMatch(/document\/rules\/0\/when\/context/);
  });
});

describe("impactOf", () => {
  const payload = (input: object, decision: string, reason: string, principal?: { key_id: string | null }) =>
    JSON.stringify({ decision, input, kind: "protect", policy: {}, reasons: [reason], ...(principal ? { principal } : {}) });
  const KEYED = {
    default_effect: "deny",
    default_reason: "closed",
    rules: [{ id: "bot1", effect: "allow", reason: "bot1_ok", when: { keys: ["key_bot1"] } }],
  } as const;

  test("a keys condition reads the payload's principal, else the receipt's key", () => {
    const rows = [
      { receipt_id: "r1", key_id: "key_bot2", payload: payload(READ, "DENIED", "closed", { key_id: "key_bot1" }) },
      { receipt_id: "r2", key_id: "key_bot1", payload: payload(READ, "DENIED", "closed") },
      { receipt_id: "r3", key_id: "key_bot2", payload: payload(READ, "DENIED", "closed") },
    ];
    const report = impactOf(rows, structuredClone(KEYED) as never);
    expect(report).toMatchObject({ evaluated: 3, unchanged: 1, changed: 2, denied_to_allowed: 2, reason_changed: 0 });
    expect(report.examples.map((e) => [e.receipt_id, e.flipped])).toEqual([["r1", true], ["r2", true]]);
  });

  test("attribute conditions decide on the entities as they were: the attributes the recorded decision read", () => {
    const input = { action: "todo.update", resource: "todo/1", context: { "subject.type": "user", "subject.id": "u1" } };
    const read = (value: unknown, version: number | null = 4) => [{ entity: "subject", type: "user", id: "u1", attribute: "roles", value, version }];
    const withReads = (entities: unknown) => JSON.stringify({ ...JSON.parse(payload(input, "DENIED", "closed")), entities });
    const rows = [
      { receipt_id: "r1", key_id: "key_a", payload: withReads(read(["editor"])) },
      { receipt_id: "r2", key_id: "key_a", payload: withReads(read(["viewer"])) },
      { receipt_id: "r3", key_id: "key_a", payload: withReads(read(null, null)) },
      { receipt_id: "r4", key_id: "key_a", payload: payload(input, "DENIED", "closed") },
    ];
    const draft = {
      default_effect: "deny",
      default_reason: "closed",
      entities: { subject: { attributes: { roles: { type: "list" } } } },
      rules: [{ id: "editors", effect: "allow", reason: "editor", when: { where: { "subject.attr.roles": { contains: "editor" } } } }],
    };
    const report = impactOf(rows, draft as never);
    expect(report).toMatchObject({ evaluated: 4, unchanged: 3, denied_to_allowed: 1 });
    expect(report.examples.map((e) => e.receipt_id)).toEqual(["r1"]);
  });

  test("at most 20 examples; a changed reason with the same decision counts as changed, as a reason change, not a flip", () => {
    const rows = Array.from({ length: 30 }, (_, i) => ({ receipt_id: `r${i}`, key_id: "key_x", payload: payload(READ, "DENIED", "other") }));
    const report = impactOf(rows, { default_effect: "deny", default_reason: "closed", rules: [] });
    expect(report).toMatchObject({ evaluated: 30, changed: 30, allowed_to_denied: 0, denied_to_allowed: 0, reason_changed: 30 });
    expect(report.examples).toHaveLength(20);
    expect(report.examples.every((e) => !e.flipped)).toBe(true);
  });
});
