// Attribute conditions through HTTP (docs/policy.md, "Entities and attributes"): a policy that
// reads stored attributes is checked when published; simulate takes the entities inline and names
// every attribute read in its payload; POST /v1/verify decides again from the payload alone, and a
// tampered read fails; policy test cases may give entities.
import { beforeAll, describe, expect, test } from "bun:test";
import canonicalizeReference from "canonicalize";
import { createHash } from "node:crypto";
import { toProtectInput } from "../../src/authzen/mapping.ts";
import { TODO_POLICY, TODO_USERS } from "../authzen/todo-entities.ts";
import { apiKey, bearer, setPlan } from "../helpers/customer.ts";
import { call, expectErrorShape, signup } from "../helpers/service.ts";

type Tenant = Awaited<ReturnType<typeof signup>>;
const hashOf = (value: unknown) => "0x" + createHash("sha256").update(canonicalizeReference(value) as string, "utf8").digest("hex");
const sim = (tenant: Tenant, json: unknown) => call("POST", "/v1/simulate", { json, headers: apiKey(tenant.apiKey) });
const verify = (tenant: Tenant, receipt: unknown) => call("POST", "/v1/verify", { json: { receipt }, headers: apiKey(tenant.apiKey) });

const [RICK, MORTY, , BETH] = TODO_USERS.map((u) => u.id!);
const update = (subject: string, owner: string) =>
  toProtectInput({ subject: { type: "user", id: subject }, action: { name: "can_update_todo" }, resource: { type: "todo", id: "t1", properties: { ownerID: owner } } });

describe("a policy over entities", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await signup();
    await setPlan(tenant.tenantId, "pro");
    // The store holds a user with the attributes the policy declares (a publish checks it), and
    // none of the Todo users: simulate takes those inline.
    const stored = await call("PUT", "/customer/entities", { json: { entities: [{ type: "user", id: "someone-else", attributes: { roles: ["viewer"], email: "someone@example.com" } }] }, headers: bearer(tenant.token) });
    expect(stored.status).toBe(200);
    const put = await call("PUT", "/customer/policy", { json: { document: TODO_POLICY }, headers: bearer(tenant.token) });
    expect(put.status).toBe(200);
  });

  test("publishing an undeclared attribute, or a list compared with eq, is refused at its JSON path", async () => {
    const rule = (where: unknown) => ({ ...TODO_POLICY, rules: [{ id: "x", effect: "allow", reason: "x", when: { where } }] });
    const cases: [unknown, RegExp][] = [
      [rule({ "subject.attr.role": { contains: "admin" } }), /^body\/document\/rules\/0\/when\/where\/subject\.attr\.role: subject\.attr\.role is not declared/],
      [rule({ "subject.attr.roles": { eq: "admin" } }), /^body\/document\/rules\/0\/when\/where\/subject\.attr\.roles\/eq: /],
      [rule({ "subject.type": { eq: "person" } }), /^body\/document\/rules\/0\/when\/where\/subject\.type\/eq: unknown entity type/],
      [rule({ "subject.attr.roles": { has: "admin" } }), /body\/document\/rules\/0\/when\/where\/subject\.attr\.roles\/has/],
    ];
    for (const [document, message] of cases) {
      const reply = await call("PUT", "/customer/policy", { json: { document }, headers: bearer(tenant.token) });
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.body.message).toMatch(message);
    }
  });

  test("simulate with inline entities: the reads are in the payload, and /v1/verify decides again from it", async () => {
    const reply = await sim(tenant, { input: update(MORTY, "morty@the-citadel.com"), entities: TODO_USERS });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ decision: "ALLOWED", reasons: ["an editor changes their own todos"] });
    expect(reply.body.payload.rule).toBe("editors_own");
    expect(reply.body.payload.entities).toEqual([
      { entity: "subject", type: "user", id: MORTY, attribute: "roles", value: ["editor"], version: 0 },
      { entity: "subject", type: "user", id: MORTY, attribute: "email", value: "morty@the-citadel.com", version: 0 },
    ]);
    expect(hashOf(reply.body.payload)).toBe(reply.body.content_hash);
    const checked = await verify(tenant, reply.body);
    expect(checked.body).toEqual({ ok: true, verified: true, checks: { content_hash: true, signature: true, decision: true, stored: false } });
  });

  test("a tampered read fails verification: the hash, and the decision decided again from it", async () => {
    const reply = await sim(tenant, { input: update(MORTY, "morty@the-citadel.com"), entities: TODO_USERS });
    const payload = reply.body.payload;
    const tampered = [
      // Morty a viewer: the decision decided again is DENIED.
      { ...payload, entities: payload.entities.map((r: { attribute: string }) => (r.attribute === "roles" ? { ...r, value: ["viewer"] } : r)) },
      // The reads left out: deciding again reads them (not stored), and they are not the payload's.
      (({ entities: _, ...rest }) => rest)(payload),
      // A read of another entity than the input names.
      { ...payload, entities: payload.entities.map((r: { id: string }) => ({ ...r, id: RICK })) },
    ];
    for (const changed of tampered) {
      const checked = await verify(tenant, { ...reply.body, payload: changed });
      expect(checked.body).toMatchObject({ verified: false, checks: { content_hash: false, decision: false } });
    }
  });

  test("a subject the entities do not hold is not stored: no attributes, and the read says so", async () => {
    const reply = await sim(tenant, { input: update(MORTY, "morty@the-citadel.com") });
    expect(reply.body.decision).toBe("DENIED");
    expect(reply.body.payload.entities).toEqual([
      { entity: "subject", type: "user", id: MORTY, attribute: "roles", value: null, version: null },
      { entity: "subject", type: "user", id: MORTY, attribute: "email", value: null, version: null },
    ]);
    expect((await verify(tenant, reply.body)).body.verified).toBe(true);
  });

  test("an admin any todo, a viewer none; a policy without entity conditions names no reads", async () => {
    expect((await sim(tenant, { input: update(RICK, "jerry@the-smiths.com"), entities: TODO_USERS })).body.decision).toBe("ALLOWED");
    expect((await sim(tenant, { input: update(BETH, "beth@the-smiths.com"), entities: TODO_USERS })).body.decision).toBe("DENIED");
    const other = await signup();
    const plain = await sim(other, { input: { action: "document.read" }, entities: TODO_USERS });
    expect(plain.body.decision).toBe("ALLOWED");
    expect("entities" in plain.body.payload).toBe(false);
  });

  test("a where on the calling key makes the key a fact of the payload, so verify decides with it", async () => {
    const other = await signup();
    await setPlan(other.tenantId, "pro");
    const document = {
      default_effect: "deny",
      default_reason: "closed",
      rules: [{ id: "own-agent", effect: "allow", reason: "the agent named in the request", when: { where: { "principal.key_id": { eq: { ref: "context.agent" } } } } }],
    };
    expect((await call("PUT", "/customer/policy", { json: { document }, headers: bearer(other.token) })).status).toBe(200);
    const keyId = (await call("GET", "/customer/keys", { headers: bearer(other.token) })).body.keys[0].key_id;
    const reply = await sim(other, { input: { action: "x", context: { agent: keyId } } });
    expect(reply.body.decision).toBe("ALLOWED");
    expect(reply.body.payload.principal).toEqual({ key_id: keyId });
    expect((await verify(other, reply.body)).body.verified).toBe(true);
    expect((await sim(other, { input: { action: "x", context: { agent: "key_other" } } })).body.decision).toBe("DENIED");
  });

  test("bad inline entities: 400 invalid_request at the JSON path", async () => {
    const cases: [unknown, RegExp][] = [
      [[{ type: "user", id: "u", attributes: { a: { nested: 1 } } }], /body\/entities\/0\/attributes\/a/],
      [[{ type: "user", id: "u", attributes: { a: Array(101).fill(1) } }], /body\/entities\/0\/attributes\/a/],
      [[{ type: "", id: "u", attributes: {} }], /body\/entities\/0\/type/],
      [[{ type: "user", id: "u", attributes: {}, version: 3 }], /body\/entities\/0/],
    ];
    for (const [entities, message] of cases) {
      const reply = await sim(tenant, { input: update(MORTY, "x"), entities });
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.body.message).toMatch(message);
    }
  });

  test("policy test cases give entities; the stored suite gates a publish that breaks them", async () => {
    const cases = [
      { name: "morty updates his own", input: update(MORTY, "morty@the-citadel.com"), entities: TODO_USERS, expect: { decision: "ALLOWED", rule: "editors_own" } },
      { name: "beth does not", input: update(BETH, "beth@the-smiths.com"), entities: TODO_USERS, expect: { decision: "DENIED" } },
      { name: "an unknown user does not", input: update(MORTY, "morty@the-citadel.com"), expect: { decision: "DENIED" } },
    ];
    const run = await call("POST", "/customer/policy/test", { json: { cases }, headers: bearer(tenant.token) });
    expect(run.body).toMatchObject({ ok: true, passed: 3, failed: 0 });
    expect((await call("PUT", "/customer/policy/tests", { json: { cases }, headers: bearer(tenant.token) })).status).toBe(200);
    // Without the owner condition every editor changes every todo: still passes these cases; without the roles, Morty fails.
    const broken = { ...TODO_POLICY, rules: TODO_POLICY.rules.filter((r) => r.id !== "editors_own") };
    const put = await call("PUT", "/customer/policy", { json: { document: broken }, headers: bearer(tenant.token) });
    expectErrorShape(put, 422, "policy_tests_failed");
    expect(put.body.results.map((r: { passed: boolean }) => r.passed)).toEqual([false, true, true]);
  });
});
