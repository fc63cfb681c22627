// The AuthZEN working group's own tests, as they judge a PDP. The decisions come from copies of
// their JSON in test/authzen/interop/, taken from the openid/authzen repository at commit e287920:
// interop/authzen-todo-backend/test/decisions-authorization-api-1_0-0{1,2}.json (the Todo
// runner, drafts 01 and 02) and interop/authzen-api-gateways/test-harness/test/decisions.json
// (the API gateway harness). Each is judged as their runner.ts judges it: a single evaluation by
// `data.decision || false`, a batch by comparing JSON.stringify(data.evaluations) with the expected
// array byte for byte. Each scenario's tenant is set up as docs/authzen.md tells a reader to: its
// examples/authzen-*/setup.ts, run as a process against a real HTTPS server, stores the users as
// entities and a policy that names none of them. The certification cases come from
// certification/authorization-api-1_0-scenario.md.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../src/app/server.ts";
import type { PolicyDocument } from "../../src/decide/policy.ts";
import { createLogger } from "../../src/log.ts";
import { bearer, setPlan } from "../helpers/customer.ts";
import { call, expectErrorShape, signup, testConfig, testService } from "../helpers/service.ts";
import TODO_01 from "./interop/todo-decisions-authorization-api-1_0-01.json";
import TODO_02 from "./interop/todo-decisions-authorization-api-1_0-02.json";
import GATEWAY from "./interop/gateway-decisions.json";

const ROOT = join(import.meta.dir, "..", "..");

type Tenant = Awaited<ReturnType<typeof signup>>;
type Scenario = { evaluation: { request: unknown; expected: boolean }[]; evaluations?: { request: unknown; expected: unknown[] }[] };

async function tenantWith(policy: unknown): Promise<Tenant> {
  const tenant = await signup();
  await setPlan(tenant.tenantId, "pro");
  const put = await call("PUT", "/customer/policy", { json: { document: policy }, headers: bearer(tenant.token) });
  expect(put.status).toBe(200);
  return tenant;
}

/** As their runner sends it: the credential as the whole Authorization header, JSON body. */
const post = (tenant: Tenant, endpoint: "evaluation" | "evaluations", json: unknown) =>
  call("POST", `/access/v1/${endpoint}`, { json, headers: { authorization: `Bearer ${tenant.apiKey}` } });

/** Runs a scenario file as runner.ts does; answers the requests that failed (none, to pass). */
async function run(tenant: Tenant, scenario: Scenario): Promise<{ passed: number; failed: unknown[] }> {
  const failed: unknown[] = [];
  let passed = 0;
  for (const { request, expected } of scenario.evaluation) {
    const data = (await post(tenant, "evaluation", request)).body;
    if (JSON.stringify(expected) === JSON.stringify(data.decision || false)) passed++;
    else failed.push(request);
  }
  for (const { request, expected } of scenario.evaluations ?? []) {
    const data = (await post(tenant, "evaluations", request)).body;
    if (JSON.stringify(expected) === JSON.stringify(data.evaluations || [])) passed++;
    else failed.push({ request, answer: data });
  }
  return { passed, failed };
}

let dir: string;
let server: Awaited<ReturnType<typeof serve>>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-interop-"));
  const { db } = await testService();
  server = await serve(testConfig({ port: 0, dataDir: dir }), { db, log: createLogger("silent") });
}, 30_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A Pro tenant set up by `bun examples/<example>/setup.ts`, as docs/authzen.md runs it. */
async function tenantOfExample(example: string): Promise<Tenant> {
  const tenant = await signup();
  await setPlan(tenant.tenantId, "pro");
  const child = Bun.spawn([process.execPath, `examples/${example}/setup.ts`], {
    cwd: ROOT,
    env: { ...process.env, WARDEN_URL: server.url, WARDEN_TOKEN: tenant.token, WARDEN_INSECURE: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  expect(stdout).toBe("entities: 5 stored (version 1)\npolicy: version 2 active\n");
  return tenant;
}

for (const example of ["authzen-todo", "authzen-gateway"]) {
  test(`examples/${example}: the policy names none of the users, who are entities beside it`, () => {
    const policy = readFileSync(join(ROOT, "examples", example, "policy.json"), "utf8");
    const { entities } = JSON.parse(readFileSync(join(ROOT, "examples", example, "entities.json"), "utf8")) as { entities: { id: string; attributes: { email: string } }[] };
    expect(entities.length).toBe(5);
    for (const user of entities) {
      expect(policy).not.toContain(user.id);
      expect(policy).not.toContain(user.attributes.email);
    }
  });
}

describe("the interop runners, against the examples' tenants", () => {
  let tenant: Tenant;
  let gateway: Tenant;
  beforeAll(async () => {
    [tenant, gateway] = await Promise.all([tenantOfExample("authzen-todo"), tenantOfExample("authzen-gateway")]);
  }, 30_000);

  test("Todo, draft 02: 43 of 43, batches included", async () => {
    expect(await run(tenant, TODO_02 as Scenario)).toEqual({ passed: 43, failed: [] });
  });

  test("Todo, draft 01: 40 of 40", async () => {
    expect(await run(tenant, TODO_01 as Scenario)).toEqual({ passed: 40, failed: [] });
  });

  test("the API gateway harness: 25 of 25", async () => {
    expect(await run(gateway, GATEWAY as Scenario)).toEqual({ passed: 25, failed: [] });
  });

  test("a decision through AuthZEN names the stored attributes it read, with their versions", async () => {
    const morty = TODO_02.evaluation.find((e) => e.request.action.name === "can_update_todo" && e.expected)!;
    const reply = await post(tenant, "evaluation", morty.request);
    expect(reply.body.decision).toBe(true);
    const receipt = await call("GET", `/customer/receipts/${reply.body.context.receipt_id}`, { headers: bearer(tenant.token) });
    expect(receipt.body.receipt.payload.entities).toEqual(
      expect.arrayContaining([expect.objectContaining({ entity: "subject", type: "user", id: morty.request.subject.id, attribute: "roles", version: 1 })]),
    );
  });

  test("a batch's receipts stay named, in item order, in the answer's top-level context", async () => {
    const { request } = TODO_02.evaluations[1];
    const reply = await post(tenant, "evaluations", request);
    expect(reply.body).toEqual({ evaluations: [{ decision: false }, { decision: true }], context: { receipt_ids: [expect.stringMatching(/^rcpt_/), expect.stringMatching(/^rcpt_/)] } });
    const receipts = await Promise.all(reply.body.context.receipt_ids.map((id: string) => call("GET", `/customer/receipts/${id}`, { headers: bearer(tenant.token) })));
    expect(receipts.map((r) => [r.body.receipt.decision, r.body.receipt.payload.input.context["resource.properties.ownerID"]])).toEqual([
      ["DENIED", "rick@the-citadel.com"],
      ["ALLOWED", "morty@the-citadel.com"],
    ]);
  });

  test("options.item_context puts each evaluation's context in its item", async () => {
    const { request } = TODO_02.evaluations[1];
    const reply = await post(tenant, "evaluations", { ...request, options: { item_context: true } });
    expect(reply.body.evaluations).toEqual([
      { decision: false, context: { receipt_id: reply.body.context.receipt_ids[0], reason_user: "no_rule_matched" } },
      { decision: true, context: { receipt_id: reply.body.context.receipt_ids[1], reason_user: "an editor changes their own todos" } },
    ]);
  });
});

// The fixture policy the certification scenario asks a PDP to hold (its "Required Policy Behaviour").
const CERTIFICATION_POLICY: PolicyDocument = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "admins_write_archived", effect: "allow", reason: "an admin writes archived records", when: { actions: ["write"], context: { "subject.properties.role": { eq: "admin" }, "resource.properties.status": { eq: "archived" } } } },
    { id: "archived_read_only", effect: "deny", reason: "archived records are read-only", when: { actions: ["write"], context: { "resource.properties.status": { eq: "archived" } } } },
    { id: "alice_soft_deletes", effect: "allow", reason: "soft delete", when: { actions: ["delete"], context: { "subject.id": { eq: "alice" }, "action.properties.soft": { eq: true } } } },
    { id: "alice_reads_writes", effect: "allow", reason: "alice reads and writes", when: { actions: ["read", "write"], context: { "subject.id": { eq: "alice" } } } },
    { id: "bob_reads", effect: "allow", reason: "bob reads", when: { actions: ["read"], context: { "subject.id": { eq: "bob" } } } },
  ],
};

describe("the certification scenario (Authorization API 1.0)", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await tenantWith(CERTIFICATION_POLICY);
  });
  const alice = { type: "user", id: "alice" };
  const record1 = { type: "record", id: "record-1" };
  const archived = { type: "record", id: "record-2", properties: { status: "archived" } };

  test("the eight fixture decisions", async () => {
    const cases: [unknown, unknown, unknown, boolean][] = [
      [alice, { name: "read" }, record1, true],
      [alice, { name: "write" }, record1, true],
      [{ type: "user", id: "bob" }, { name: "read" }, record1, true],
      [{ type: "user", id: "bob" }, { name: "write" }, record1, false],
      [alice, { name: "write" }, archived, false],
      [{ type: "user", id: "bob", properties: { role: "admin" } }, { name: "write" }, archived, true],
      [alice, { name: "delete", properties: { soft: true } }, record1, true],
      [alice, { name: "delete", properties: { soft: false } }, record1, false],
    ];
    for (const [subject, action, resource, decision] of cases) {
      const reply = await post(tenant, "evaluation", { subject, action, resource });
      expect([reply.status, reply.body.decision]).toEqual([200, decision]);
    }
  });

  test("a body that is not JSON, or empty: 400 (not 415) on both routes", async () => {
    for (const endpoint of ["evaluation", "evaluations"]) {
      const send = (body: string | undefined, type?: string) =>
        call("POST", `/access/v1/${endpoint}`, { body, headers: { authorization: `Bearer ${tenant.apiKey}`, ...(type ? { "content-type": type } : {}) } });
      expectErrorShape(await send(JSON.stringify({ subject: alice, action: { name: "read" }, resource: record1 }), "text/plain"), 400, "invalid_json");
      expectErrorShape(await send("subject=alice", "application/x-www-form-urlencoded"), 400, "invalid_json");
      expectErrorShape(await send("{", "application/json"), 400, "invalid_json");
      expectErrorShape(await send(undefined, "application/json"), 400, "invalid_request");
      expect((await send("")).status).toBe(400);
    }
    // The rest of the API keeps 415.
    const protect = await call("POST", "/v1/protect", { body: JSON.stringify({ action: "read" }), headers: { "x-api-key": tenant.apiKey, "content-type": "text/plain" } });
    expectErrorShape(protect, 415, "unsupported_media_type");
  });

  test("a batch whose second evaluation has no resource: 200, that item false with its error, the first decided", async () => {
    const reply = await post(tenant, "evaluations", {
      subject: alice,
      action: { name: "read" },
      options: { evaluations_semantic: "execute_all" },
      evaluations: [{ resource: record1 }, {}],
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      evaluations: [
        { decision: true },
        { decision: false, context: { error: { status: 400, code: "invalid_request", message: "body/evaluations/1: resource is required (in the evaluation or at the top level)" } } },
      ],
      context: { receipt_ids: [expect.stringMatching(/^rcpt_/), null] },
    });
  });

  test("the batch cases: decisions in order, defaults inherited whole", async () => {
    const batches: [unknown, boolean[]][] = [
      [{ subject: { type: "user", id: "bob" }, resource: record1, evaluations: [{ action: { name: "read" } }, { action: { name: "write" } }] }, [true, false]],
      [{ subject: alice, action: { name: "write" }, evaluations: [{ resource: { ...record1, properties: { status: "active" } } }, { resource: archived }] }, [true, false]],
      [{ action: { name: "write" }, resource: archived, evaluations: [{ subject: alice }, { subject: { type: "user", id: "bob", properties: { role: "admin" } } }] }, [false, true]],
      [{ evaluations: [{ subject: alice, action: { name: "read" }, resource: record1 }, { subject: { type: "user", id: "bob" }, action: { name: "write" }, resource: record1 }] }, [true, false]],
      [{ subject: alice, action: { name: "write" }, resource: { ...record1, properties: { status: "active" } }, evaluations: [{}, { resource: archived }] }, [true, false]],
    ];
    for (const [request, decisions] of batches) {
      const reply = await post(tenant, "evaluations", request);
      expect([reply.status, reply.body.evaluations]).toEqual([200, decisions.map((decision) => ({ decision }))]);
    }
  });
});
