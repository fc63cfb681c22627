// The AuthZEN Authorization API 1.0 as a gateway calls it: the specification's own request and
// response examples under a policy that gives their decisions, batches and their semantics, the
// receipts behind each decision, credentials, and bad input (400, never 500).
import { beforeAll, describe, expect, test } from "bun:test";
import { createService } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import type { PolicyDocument } from "../../src/decide/policy.ts";
import { apiKey, bearer, protect, setPlan, setUsage } from "../helpers/customer.ts";
import { call, expectErrorShape, signup, testConfig, testService, type Reply } from "../helpers/service.ts";

// Decisions that make the specification's examples come out as its responses show.
const POLICY: PolicyDocument = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "viewers_cannot_edit", effect: "deny", reason: "Subject is a viewer of the resource", when: { actions: ["can_edit"] } },
    { id: "unknown_documents", effect: "deny", reason: "resource not found", when: { resources: ["document/subject-search.md", "document/2"] } },
    { id: "alice_reads", effect: "allow", reason: "alice may read", when: { actions: ["can_read", "read"], context: { "subject.id": { eq: "alice@example.com" } } } },
    { id: "payments", effect: "allow", reason: "payment_within_limit", when: { actions: ["payment.send"], amount: { lte: 1000 }, currency: { eq: "USD" } } },
  ],
};

let tenant: Awaited<ReturnType<typeof signup>>;
beforeAll(async () => {
  tenant = await signup();
  await setPlan(tenant.tenantId, "pro");
  const put = await call("PUT", "/customer/policy", { json: { document: POLICY }, headers: bearer(tenant.token) });
  expect(put.status).toBe(200);
});

const evaluation = (json: unknown, headers: Record<string, string> = apiKey(tenant.apiKey)) => call("POST", "/access/v1/evaluation", { json, headers });
const evaluations = (json: unknown, headers: Record<string, string> = apiKey(tenant.apiKey)) => call("POST", "/access/v1/evaluations", { json, headers });
const receipt = async (id: string) => (await call("GET", `/customer/receipts/${id}`, { headers: bearer(tenant.token) })).body.receipt;
const receiptCount = async () => (await call("GET", "/customer/receipts?limit=100", { headers: bearer(tenant.token) })).body.receipts.length as number;
/** Only the decisions: the context is warden's own (receipt id, reason). */
const decisions = (reply: Reply) => (reply.body.evaluations as { decision: boolean }[]).map((e) => ({ decision: e.decision }));

describe("the specification's examples", () => {
  test("Access Evaluation request example (section 6.1): decided, answered as a Decision with the receipt", async () => {
    const reply = await evaluation({
      subject: { type: "user", id: "alice@example.com" },
      resource: { type: "account", id: "123" },
      action: { name: "can_read", properties: { method: "GET" } },
      context: { time: "1985-10-26T01:22-07:00" },
    });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(["context", "decision"]);
    expect(reply.body).toEqual({ decision: true, context: { receipt_id: expect.stringMatching(/^rcpt_/), reason_user: "alice may read" } });
  });

  test("the HTTPS binding's evaluation example: X-Request-ID echoed, {decision: true}", async () => {
    const reply = await evaluation(
      { subject: { type: "user", id: "alice@example.com" }, resource: { type: "todo", id: "1" }, action: { name: "can_read" }, context: { time: "1985-10-26T01:22-07:00" } },
      { ...apiKey(tenant.apiKey), "x-request-id": "bfe9eb29-ab87-4ca3-be83-a1d5d8305716" },
    );
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toStartWith("application/json");
    expect(reply.headers.get("x-request-id")).toBe("bfe9eb29-ab87-4ca3-be83-a1d5d8305716");
    expect(reply.body.decision).toBe(true);
    expect((await receipt(reply.body.context.receipt_id)).request_id).toBe("bfe9eb29-ab87-4ca3-be83-a1d5d8305716");
  });

  test("the HTTPS binding's evaluations example: [true, false, false] in order", async () => {
    const reply = await evaluations({
      options: { item_context: true },
      subject: { type: "user", id: "alice@example.com" },
      context: { time: "2024-05-31T15:22-07:00" },
      action: { name: "can_read" },
      evaluations: [
        { resource: { type: "document", id: "boxcarring.md" } },
        { resource: { type: "document", id: "subject-search.md" } },
        { action: { name: "can_edit" }, resource: { type: "document", id: "resource-search.md" } },
      ],
    });
    expect(reply.status).toBe(200);
    // RECOMMENDED: no top-level decision beside the evaluations.
    expect(Object.keys(reply.body)).toEqual(["evaluations", "context"]);
    expect(decisions(reply)).toEqual([{ decision: true }, { decision: false }, { decision: false }]);
    expect(reply.body.evaluations.map((e: { context: { reason_user: string } }) => e.context.reason_user)).toEqual(["alice may read", "resource not found", "Subject is a viewer of the resource"]);
  });

  test("three evaluations with no defaults (section 7.1)", async () => {
    const one = (id: string) => ({ subject: { type: "user", id: "alice@example.com" }, action: { name: "can_read" }, resource: { type: "document", id }, context: { time: "2024-05-31T15:22-07:00" } });
    const reply = await evaluations({ evaluations: [one("boxcarring.md"), one("subject-search.md"), one("resource-search.md")] });
    expect(reply.status).toBe(200);
    expect(decisions(reply)).toEqual([{ decision: true }, { decision: false }, { decision: true }]);
  });

  const read123 = (semantic: string) => ({
    subject: { type: "user", id: "alice@example.com" },
    action: { name: "read" },
    options: { evaluations_semantic: semantic },
    evaluations: [{ resource: { type: "document", id: "1" } }, { resource: { type: "document", id: "2" } }, { resource: { type: "document", id: "3" } }],
  });

  test("execute_all: every evaluation, in order (the specification's response)", async () => {
    const before = await receiptCount();
    const reply = await evaluations(read123("execute_all"));
    expect(decisions(reply)).toEqual([{ decision: true }, { decision: false }, { decision: true }]);
    expect(await receiptCount()).toBe(before + 3);
  });

  test("deny_on_first_deny: stops after the first denial, which is answered", async () => {
    const before = await receiptCount();
    const reply = await evaluations(read123("deny_on_first_deny"));
    expect(decisions(reply)).toEqual([{ decision: true }, { decision: false }]);
    // The third was never decided, so never stored.
    expect(await receiptCount()).toBe(before + 2);
  });

  test("permit_on_first_permit: stops after the first permit", async () => {
    const before = await receiptCount();
    const reply = await evaluations(read123("permit_on_first_permit"));
    expect(decisions(reply)).toEqual([{ decision: true }]);
    expect(await receiptCount()).toBe(before + 1);
  });

  test("the options example: unknown options are ignored, and an evaluation with no action anywhere is a closed decision saying so", async () => {
    const example = { evaluations: [{ resource: { type: "doc", id: "1" }, subject: { type: "doc", id: "2" } }], options: { evaluations_semantic: "execute_all", another_option: "value" } };
    const before = await receiptCount();
    const refused = await evaluations(example);
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({
      evaluations: [{ decision: false, context: { error: { status: 400, code: "invalid_request", message: "body/evaluations/0: action is required (in the evaluation or at the top level)" } } }],
      context: { receipt_ids: [null] },
    });
    expect(await receiptCount()).toBe(before);
    const accepted = await evaluations({ ...example, action: { name: "can_read" } });
    expect(accepted.status).toBe(200);
    expect(decisions(accepted)).toEqual([{ decision: false }]);
  });

  test("no evaluations array (or an empty one): the single evaluation's response", async () => {
    const single = { subject: { type: "user", id: "alice@example.com" }, action: { name: "can_read" }, resource: { type: "document", id: "boxcarring.md" } };
    for (const body of [single, { ...single, evaluations: [] }]) {
      const reply = await evaluations(body);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ decision: true, context: { receipt_id: expect.stringMatching(/^rcpt_/), reason_user: "alice may read" } });
    }
  });
});

describe("each evaluation is a protect", () => {
  test("a signed protect receipt of the mapped input, which /v1/verify checks", async () => {
    const reply = await evaluation(
      { subject: { type: "agent", id: "billing-bot", properties: { team: "finance" } }, action: { name: "payment.send", properties: { amount: 250, currency: "USD" } }, resource: { type: "vendor", id: "acme" } },
      { authorization: `Bearer ${tenant.apiKey}` },
    );
    expect(reply.body).toEqual({ decision: true, context: { receipt_id: expect.stringMatching(/^rcpt_/), reason_user: "payment_within_limit" } });
    const stored = await receipt(reply.body.context.receipt_id);
    expect(stored).toMatchObject({ kind: "protect", decision: "ALLOWED", reasons: ["payment_within_limit"] });
    expect(stored.payload.input).toEqual({
      action: "payment.send",
      resource: "vendor/acme",
      amount: 250,
      currency: "USD",
      context: { "subject.type": "agent", "subject.id": "billing-bot", "subject.properties.team": "finance", "resource.type": "vendor", "resource.id": "acme" },
    });
    const verified = await call("POST", "/v1/verify", { json: { receipt: stored }, headers: apiKey(tenant.apiKey) });
    expect(verified.body).toMatchObject({ ok: true, verified: true });
  });

  test("the same decision as /v1/protect of the same input", async () => {
    const reply = await evaluation({ subject: { type: "user", id: "bob" }, action: { name: "payment.send", properties: { amount: 5000, currency: "USD" } }, resource: { type: "vendor", id: "acme" } });
    const viaAuthzen = await receipt(reply.body.context.receipt_id);
    const direct = await protect(tenant.apiKey, viaAuthzen.payload.input);
    expect(reply.body.decision).toBe(false);
    expect(direct.body.decision).toBe("DENIED");
    expect(direct.body.content_hash).toBe(viaAuthzen.content_hash);
  });

  test("Idempotency-Key: a retry gets the first answer (the same receipt)", async () => {
    const body = { subject: { type: "user", id: "alice@example.com" }, action: { name: "can_read" }, resource: { type: "document", id: "boxcarring.md" } };
    const headers = { ...apiKey(tenant.apiKey), "idempotency-key": crypto.randomUUID() };
    const first = await evaluation(body, headers);
    const again = await evaluation(body, headers);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  test("the daily quota: a single evaluation is refused with 429 like protect; in a batch the refused ones are closed decisions naming the limit", async () => {
    const t = await signup();
    await setUsage(t.tenantId, 999, 0); // the free plan's 1,000 a day, less one
    const one = { subject: { type: "user", id: "u" }, action: { name: "payment.send", properties: { amount: 1, currency: "USD" } }, resource: { type: "vendor", id: "acme" } };
    const batch = await evaluations({ ...one, evaluations: [{}, {}, {}] }, apiKey(t.apiKey));
    expect(batch.status).toBe(200);
    const [decided, ...refused] = [...batch.body.evaluations].sort((a: { context?: object }, b: { context?: object }) => Number(a.context !== undefined) - Number(b.context !== undefined));
    expect(decided).toEqual({ decision: true });
    expect(batch.body.context.receipt_ids.filter((id: string | null) => id !== null)).toHaveLength(1);
    for (const e of refused) expect(e).toEqual({ decision: false, context: { error: { status: 429, code: "quota_exceeded", message: expect.any(String), limit: "protect_per_day" } } });

    const single = await evaluation(one, apiKey(t.apiKey));
    expectErrorShape(single, 429, "quota_exceeded");
    expect(single.body.limit).toBe("protect_per_day");
    expect(single.headers.get("ratelimit-remaining")).toBe("0");
  });
});

describe("under a require_approval rule", () => {
  const APPROVAL_POLICY: PolicyDocument = {
    default_effect: "deny",
    default_reason: "no_rule_matched",
    rules: [{ id: "refunds_need_one", effect: "require_approval", reason: "refund_over_100", when: { actions: ["refund.issue"], amount: { gt: 100 } }, approval: { expires_in: 600 } }],
  };
  let held: Awaited<ReturnType<typeof signup>>;
  beforeAll(async () => {
    held = await signup();
    await setPlan(held.tenantId, "pro");
    expect((await call("PUT", "/customer/policy", { json: { document: APPROVAL_POLICY }, headers: bearer(held.token) })).status).toBe(200);
  });
  const refund = (amount: number) => ({ subject: { type: "agent", id: "refund-bot" }, action: { name: "refund.issue", properties: { amount, currency: "EUR" } }, resource: { type: "order", id: "o-1" } });
  const approval = (id: string) => call("GET", `/v1/approvals/${id}`, { headers: apiKey(held.apiKey) });
  const pending = async () => (await call("GET", "/customer/approvals?status=pending&limit=100", { headers: bearer(held.token) })).body.approvals.length as number;

  test("the answer is false and names the approval, which the gateway's key can follow", async () => {
    const reply = await evaluation(refund(250), apiKey(held.apiKey));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      decision: false,
      context: { receipt_id: expect.stringMatching(/^rcpt_/), reason_user: "refund_over_100", approval_id: expect.stringMatching(/^apv_/), approval_status: "pending", expires_at: expect.any(String) },
    });
    const seen = await approval(reply.body.context.approval_id);
    expect(seen.body).toMatchObject({ ok: true, status: "pending", protect_receipt_id: reply.body.context.receipt_id, expires_at: reply.body.context.expires_at });
  });

  test("in a batch: the approval is in the item's context when asked for; a bare item otherwise", async () => {
    const withContext = await evaluations({ ...refund(300), evaluations: [{}], options: { item_context: true } }, apiKey(held.apiKey));
    expect(withContext.body.evaluations).toEqual([
      { decision: false, context: { receipt_id: withContext.body.context.receipt_ids[0], reason_user: "refund_over_100", approval_id: expect.stringMatching(/^apv_/), approval_status: "pending", expires_at: expect.any(String) } },
    ]);
    const bare = await evaluations({ ...refund(350), evaluations: [{}] }, apiKey(held.apiKey));
    expect(bare.body).toEqual({ evaluations: [{ decision: false }], context: { receipt_ids: [expect.stringMatching(/^rcpt_/)] } });
  });

  test("no approval is named where no rule holds the action", async () => {
    const reply = await evaluation(refund(50), apiKey(held.apiKey));
    expect(reply.body).toEqual({ decision: false, context: { receipt_id: expect.stringMatching(/^rcpt_/), reason_user: "no_rule_matched" } });
  });

  // Passes once POST /v1/protect answers a repeated action of the same key with its pending
  // approval (docs/api.md, "Approvals": one approval per key and action hash while it is pending):
  // an evaluation is that protect, so it needs nothing of its own.
  test("the same evaluation twice: the same approval, and no second one opened", async () => {
    const first = await evaluation(refund(400), apiKey(held.apiKey));
    const before = await pending();
    const again = await evaluation(refund(400), apiKey(held.apiKey));
    expect(again.body.context.approval_id).toBe(first.body.context.approval_id);
    expect(again.body.context.approval_status).toBe("pending");
    expect(await pending()).toBe(before);
  });
});

describe("credentials", () => {
  const body = { subject: { type: "user", id: "alice@example.com" }, action: { name: "can_read" }, resource: { type: "document", id: "boxcarring.md" } };

  test("an API key as X-API-Key or as Authorization: Bearer", async () => {
    expect((await evaluation(body, apiKey(tenant.apiKey))).body.decision).toBe(true);
    expect((await evaluation(body, { authorization: `Bearer ${tenant.apiKey}` })).body.decision).toBe(true);
    expect((await evaluations(body, { authorization: `bearer ${tenant.apiKey}` })).body.decision).toBe(true);
  });

  test("a session token is not an API key, and /v1/protect still takes only X-API-Key", async () => {
    expectErrorShape(await evaluation(body, bearer(tenant.token)), 401, "unauthorized");
    expectErrorShape(await call("POST", "/v1/protect", { json: { action: "can_read" }, headers: bearer(tenant.apiKey) }), 401, "unauthorized");
  });

  test("another tenant's key decides under that tenant's policy, into its own log", async () => {
    const other = await signup();
    const reply = await evaluation(body, apiKey(other.apiKey));
    expect(reply.body).toMatchObject({ decision: false, context: { reason_user: "no_rule_matched" } });
    expectErrorShape(await call("GET", `/customer/receipts/${reply.body.context.receipt_id}`, { headers: bearer(tenant.token) }), 404, "not_found");
  });
});

describe("bad input: 400, nothing stored", () => {
  const good = { subject: { type: "user", id: "alice@example.com" }, action: { name: "can_read" }, resource: { type: "document", id: "boxcarring.md" } };
  const cases: [string, "evaluation" | "evaluations", unknown, string][] = [
    ["no subject", "evaluation", { action: good.action, resource: good.resource }, "body/subject"],
    ["a subject without id", "evaluation", { ...good, subject: { type: "user" } }, "body/subject/id"],
    ["a number as the subject's id", "evaluation", { ...good, subject: { type: "user", id: 7 } }, "body/subject/id"],
    ["no action name", "evaluation", { ...good, action: { properties: {} } }, "body/action/name"],
    ["an action warden cannot name", "evaluation", { ...good, action: { name: "read all" } }, "body/action/name"],
    ["a context that is not an object", "evaluation", { ...good, context: "now" }, "body/context"],
    ["an array body", "evaluation", [good], "body"],
    ["evaluations that are not an array", "evaluations", { ...good, evaluations: {} }, "body/evaluations"],
    ["more than 100 evaluations", "evaluations", { ...good, evaluations: Array.from({ length: 101 }, () => ({})) }, "body/evaluations"],
    ["an unknown semantic", "evaluations", { ...good, evaluations: [{}], options: { evaluations_semantic: "all" } }, "body/options/evaluations_semantic"],
    ["an evaluation of the wrong type", "evaluations", { ...good, evaluations: [{}, { resource: { type: "document" } }] }, "body/evaluations/1/resource/id"],
    ["a batch-less request with no resource", "evaluations", { subject: good.subject, action: good.action }, "body: resource is required"],
  ];
  test.each(cases)("%s", async (_, route, json, path) => {
    const before = await receiptCount();
    const reply = await (route === "evaluation" ? evaluation(json) : evaluations(json));
    expectErrorShape(reply, 400, "invalid_request");
    expect(reply.body.message).toStartWith(path);
    expect(await receiptCount()).toBe(before);
  });

  test("in a batch, items that cannot be decided are closed decisions naming their path; the others are decided", async () => {
    const before = await receiptCount();
    const reply = await evaluations({ ...good, evaluations: [{}, { context: { "bad name": 1 } }, { subject: undefined, resource: undefined }] });
    expect(reply.status).toBe(200);
    expect(reply.body.evaluations).toEqual([
      { decision: true },
      { decision: false, context: { error: { status: 400, code: "invalid_request", message: expect.stringMatching(/^body\/evaluations\/1\/context\/bad name: /) } } },
      { decision: true },
    ]);
    expect(reply.body.context.receipt_ids.map((id: string | null) => id !== null)).toEqual([true, false, true]);
    expect(await receiptCount()).toBe(before + 2);
  });

  test("deny_on_first_deny: an item that cannot be decided counts as the denial", async () => {
    const reply = await evaluations({ ...good, options: { evaluations_semantic: "deny_on_first_deny" }, evaluations: [{}, { action: { name: "a b" } }, {}] });
    expect(reply.body.evaluations.map((e: { decision: boolean }) => e.decision)).toEqual([true, false]);
  });

  test("not JSON, or another media type: 400 invalid_json (as AuthZEN clients expect, not 415); over 64 KiB: 413", async () => {
    const send = (body: string, type = "application/json") => call("POST", "/access/v1/evaluation", { body, headers: { ...apiKey(tenant.apiKey), "content-type": type } });
    expectErrorShape(await send("{"), 400, "invalid_json");
    expectErrorShape(await send(JSON.stringify(good), "text/plain"), 400, "invalid_json");
    expectErrorShape(await send(JSON.stringify({ ...good, context: { pad: "x".repeat(70_000) } })), 413, "payload_too_large");
  });

  test("unknown fields are ignored, as the specification requires of receivers", async () => {
    const reply = await evaluation({ ...good, subject: { ...good.subject, extra: 1 }, action: { ...good.action, extra: 2 }, extra: { nested: true } });
    expect(reply.status).toBe(200);
    expect((await receipt(reply.body.context.receipt_id)).payload.input.context).toEqual({ "subject.type": "user", "subject.id": "alice@example.com", "resource.type": "document", "resource.id": "boxcarring.md" });
  });
});

describe("GET /.well-known/authzen-configuration", () => {
  test("the metadata of this PDP, public, at PUBLIC_URL", async () => {
    const { db } = await testService();
    const service = await createService({ ...testConfig(), publicUrl: "https://pdp.example.com" }, { db, log: createLogger("silent") });
    const reply = await call("GET", "/.well-known/authzen-configuration", { service });
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toStartWith("application/json");
    expect(reply.body).toEqual({
      policy_decision_point: "https://pdp.example.com",
      access_evaluation_endpoint: "https://pdp.example.com/access/v1/evaluation",
      access_evaluations_endpoint: "https://pdp.example.com/access/v1/evaluations",
      search_subject_endpoint: "https://pdp.example.com/access/v1/search/subject",
      search_resource_endpoint: "https://pdp.example.com/access/v1/search/resource",
      search_action_endpoint: "https://pdp.example.com/access/v1/search/action",
    });
  });
});
