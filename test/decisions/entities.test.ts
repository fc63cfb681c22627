// Protect over stored entities (docs/policy.md, "Entities and attributes"): the decision reads the
// subject's and resource's attributes from the tenant's store, names each read with the entity's
// version in the payload, POST /v1/verify decides it again from the payload alone, a write to the
// store applies to the very next protect, and an entity the store does not hold reads as missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyResult } from "../../src/sdk/verify.ts";
import { runCli } from "../helpers/cli.ts";
import { apiKey, bearer, protect, setPlan } from "../helpers/customer.ts";
import { call, secondInstance, signup } from "../helpers/service.ts";

type Tenant = Awaited<ReturnType<typeof signup>>;

const POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  entities: {
    subject: { types: ["user"], attributes: { roles: { type: "list" } } },
    resource: { types: ["vendor"], attributes: { tier: { type: "string" } } },
  },
  rules: [
    {
      id: "payers_pay_gold",
      effect: "allow",
      reason: "a payer pays a gold vendor",
      when: { actions: ["payment.send"], where: { "subject.attr.roles": { contains: "payer" }, "resource.attr.tier": { eq: "gold" } } },
    },
  ],
};

const payment = (user: string, vendor: string) => ({ action: "payment.send", resource: `vendor/${vendor}`, amount: 10, currency: "USD", context: { "subject.type": "user", "subject.id": user } });
const putEntities = (tenant: Tenant, entities: unknown[]) => call("PUT", "/customer/entities", { json: { entities }, headers: bearer(tenant.token) });

let tenant: Tenant;
beforeAll(async () => {
  tenant = await signup();
  await setPlan(tenant.tenantId, "pro");
  expect(
    (
      await putEntities(tenant, [
        { type: "user", id: "ann", attributes: { roles: ["payer"] } },
        { type: "user", id: "bob", attributes: { roles: ["viewer"] } },
        { type: "vendor", id: "acme", attributes: { tier: "gold" } },
      ])
    ).status,
  ).toBe(200);
  expect((await call("PUT", "/customer/policy", { json: { document: POLICY }, headers: bearer(tenant.token) })).status).toBe(200);
});

describe("protect over stored entities", () => {
  test("the stored attributes decide, each read named in the payload with its version; /v1/verify decides again", async () => {
    const allowed = await protect(tenant.apiKey, payment("ann", "acme"));
    expect(allowed.body).toMatchObject({ decision: "ALLOWED", reasons: ["a payer pays a gold vendor"] });
    const reads = allowed.body.payload.entities;
    expect(reads).toHaveLength(2);
    expect(reads).toContainEqual({ entity: "subject", type: "user", id: "ann", attribute: "roles", value: ["payer"], version: expect.any(Number) });
    expect(reads).toContainEqual({ entity: "resource", type: "vendor", id: "acme", attribute: "tier", value: "gold", version: expect.any(Number) });
    const checked = await call("POST", "/v1/verify", { json: { receipt: allowed.body }, headers: apiKey(tenant.apiKey) });
    expect(checked.body).toMatchObject({ verified: true, checks: { content_hash: true, signature: true, decision: true } });

    const denied = await protect(tenant.apiKey, payment("bob", "acme"));
    expect(denied.body).toMatchObject({ decision: "DENIED", reasons: ["no_rule_matched"] });
  });

  test("a write to the store applies to the next protect, and the read names the entity's new version", async () => {
    const before = await protect(tenant.apiKey, payment("bob", "acme"));
    expect(before.body.decision).toBe("DENIED");
    const version = before.body.payload.entities.find((r: { id: string }) => r.id === "bob").version;
    expect((await putEntities(tenant, [{ type: "user", id: "bob", attributes: { roles: ["viewer", "payer"] } }])).status).toBe(200);
    const after = await protect(tenant.apiKey, payment("bob", "acme"));
    expect(after.body.decision).toBe("ALLOWED");
    const read = after.body.payload.entities.find((r: { id: string }) => r.id === "bob");
    expect(read.value).toEqual(["viewer", "payer"]);
    expect(read.version).toBeGreaterThan(version);
  });

  test("a write through another instance applies to the next protect here, where the key and the entity were read before it", async () => {
    const two = await secondInstance();
    try {
      const ask = () => call("POST", "/v1/protect", { json: payment("cy", "acme"), headers: apiKey(tenant.apiKey) });
      expect((await putEntities(tenant, [{ type: "user", id: "cy", attributes: { roles: ["viewer"] } }])).status).toBe(200);
      // Twice here: the key's context and cy are now kept by this instance.
      expect((await ask()).body.decision).toBe("DENIED");
      expect((await ask()).body.decision).toBe("DENIED");
      const written = await call("PUT", "/customer/entities", { json: { entities: [{ type: "user", id: "cy", attributes: { roles: ["payer"] } }] }, headers: bearer(tenant.token), service: two.service });
      expect(written.status).toBe(200);
      const after = await ask();
      expect(after.body.decision).toBe("ALLOWED");
      expect(after.body.payload.entities.find((r: { id: string }) => r.id === "cy").value).toEqual(["payer"]);
    } finally {
      await two.close();
    }
  });

  test("an entity the store does not hold has no attributes, and the payload says so (never a 500)", async () => {
    const reply = await protect(tenant.apiKey, payment("nobody", "acme"));
    expect(reply.status).toBe(200);
    expect(reply.body.decision).toBe("DENIED");
    expect(reply.body.payload.entities).toContainEqual({ entity: "subject", type: "user", id: "nobody", attribute: "roles", value: null, version: null });
    const checked = await call("POST", "/v1/verify", { json: { receipt: reply.body }, headers: apiKey(tenant.apiKey) });
    expect(checked.body.verified).toBe(true);
  });

  test("another tenant's entities are not read", async () => {
    const other = await signup();
    await setPlan(other.tenantId, "pro");
    // Entities of the same types, but not ann nor acme.
    expect((await putEntities(other, [{ type: "user", id: "zed", attributes: { roles: ["payer"] } }, { type: "vendor", id: "other", attributes: { tier: "gold" } }])).status).toBe(200);
    expect((await call("PUT", "/customer/policy", { json: { document: POLICY }, headers: bearer(other.token) })).status).toBe(200);
    const reply = await protect(other.apiKey, payment("ann", "acme"));
    expect(reply.body.decision).toBe("DENIED");
    expect(reply.body.payload.entities.every((r: { version: number | null }) => r.version === null)).toBe(true);
  });

  test("a policy whose schema names a type or attribute no stored entity has is refused when published, unless optional", async () => {
    const fresh = await signup();
    await setPlan(fresh.tenantId, "pro");
    const publish = (document: unknown) => call("PUT", "/customer/policy", { json: { document }, headers: bearer(fresh.token) });
    const empty = await publish(POLICY);
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/^body\/document\/entities\/subject\/types\/0: no stored entity has type "user"/);
    expect((await putEntities(fresh, [{ type: "user", id: "ann", attributes: { roles: ["payer"] } }, { type: "vendor", id: "acme", attributes: { country: "DE" } }])).status).toBe(200);
    const noTier = await publish(POLICY);
    expect(noTier.status).toBe(400);
    expect(noTier.body.message).toMatch(/^body\/document\/entities\/resource\/attributes\/tier: no stored resource entity has the attribute "tier"/);
    const optional = { ...POLICY, entities: { ...POLICY.entities, resource: { types: ["vendor"], attributes: { tier: { type: "string", optional: true } } } } };
    expect((await publish(optional)).status).toBe(200);
  });
});

describe("offline, with the policy version the payload names: the decision made again from the payload alone", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "warden-entities-verify-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("the SDK and warden verify --policy: a true receipt holds; a changed read fails the decision (and the hash)", async () => {
    const allowed = await protect(tenant.apiKey, payment("ann", "acme"));
    const jwks = (await call("GET", "/.well-known/jwks.json")).body;
    const version = await call("GET", `/customer/policy/versions/${allowed.body.payload.policy.version}`, { headers: bearer(tenant.token) });
    const policy = version.body.document;
    // Ann read as a viewer: the payload no longer decides ALLOWED.
    const reads = allowed.body.payload.entities.map((r: { attribute: string }) => (r.attribute === "roles" ? { ...r, value: ["viewer"] } : r));
    const tampered = { ...allowed.body, payload: { ...allowed.body.payload, entities: reads } };
    // Another document than the version named: no decision is made under it.
    const other = { ...version.body, document: { ...policy, default_effect: "allow" } };

    expect(await verifyResult(allowed.body, jwks, { policy })).toEqual({ verified: true, checks: { content_hash: true, signature: true, decision: true } });
    expect(await verifyResult(tampered, jwks, { policy })).toEqual({ verified: false, checks: { content_hash: false, signature: true, decision: false } });
    expect(await verifyResult(allowed.body, jwks, { policy: other.document })).toEqual({ verified: false, checks: { content_hash: true, signature: true, decision: false } });
    expect(await verifyResult(allowed.body, jwks)).toEqual({ verified: true, checks: { content_hash: true, signature: true } });

    const files = { result: join(dir, "result.json"), tampered: join(dir, "tampered.json"), jwks: join(dir, "jwks.json"), policy: join(dir, "policy.json") };
    writeFileSync(files.result, JSON.stringify(allowed.body));
    writeFileSync(files.tampered, JSON.stringify(tampered));
    writeFileSync(files.jwks, JSON.stringify(jwks));
    writeFileSync(files.policy, JSON.stringify(version.body));
    const otherFile = join(dir, "other.json");
    writeFileSync(otherFile, JSON.stringify(other));
    const good = await runCli(["verify", files.result, "--jwks", files.jwks, "--policy", files.policy]);
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ verified: true, checks: { content_hash: true, signature: true, decision: true } });
    const bad = await runCli(["verify", files.tampered, "--jwks", files.jwks, "--policy", files.policy]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ verified: false, checks: { content_hash: false, signature: true, decision: false } });
    const wrongPolicy = await runCli(["verify", files.result, "--jwks", files.jwks, "--policy", otherFile]);
    expect(wrongPolicy.code).toBe(1);
    expect(JSON.parse(wrongPolicy.stdout)).toMatchObject({ verified: false, checks: { content_hash: true, signature: true, decision: false } });
  });
});
