// The operator scripts as operators run them: psql against the real server, and the CLI against
// the embedded database, on the same files.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { createService, type Service } from "../../src/app/service.ts";
import { openDb } from "../../src/db/index.ts";
import { createLogger } from "../../src/log.ts";
import { generateSigningKey } from "../../src/crypto/signature.ts";
import { call, signup, testConfig, testService, uniqueEmail, GOOD_PASSWORD } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

const ROOT = join(import.meta.dir, "..", "..");
const SLOW = 60_000;

async function run(cmd: string[], env: Record<string, string> = {}) {
  const child = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, code };
}

describe.skipIf(!process.env.TEST_DATABASE_URL)("psql against the real server", () => {
  const url = process.env.TEST_DATABASE_URL!;
  const psql = (file: string, vars: Record<string, string>) =>
    run(["psql", url, "-X", "-q", "-A", "-t", "-F", "|", ...Object.entries(vars).flatMap(([k, v]) => ["-v", `${k}=${v}`]), "-f", `sql/ops/${file}.sql`]);

  test("list, approve, reject, grant, revoke and show, with refusals exiting non-zero", async () => {
    const a = await signup();
    const b = await signup();
    const reqA = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "enterprise", reason: "psql a" }, headers: { authorization: `Bearer ${a.token}` } })).body;
    const reqB = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "psql b" }, headers: { authorization: `Bearer ${b.token}` } })).body;

    const listed = await psql("upgrades_list", {});
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split("\n");
    const rowA = lines.find((l) => l.startsWith(reqA.request_id))!;
    expect(rowA.split("|").slice(0, 5)).toEqual([reqA.request_id, a.tenantId, a.email, "free", "enterprise"]);
    expect(lines.indexOf(rowA)).toBeLessThan(lines.findIndex((l) => l.startsWith(reqB.request_id)));

    const approved = await psql("upgrades_approve", { request_id: reqA.request_id, reviewer: "ops-alice" });
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain(`${reqA.request_id}|${a.tenantId}|approved|enterprise|ops-alice|`);
    const again = await psql("upgrades_approve", { request_id: reqA.request_id, reviewer: "ops-alice" });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain("is approved");

    const rejected = await psql("upgrades_reject", { request_id: reqB.request_id, reviewer: "ops-bob", note: "Come back with usage numbers; it's quick." });
    expect(rejected.code).toBe(0);
    const listB = await call("GET", "/customer/upgrades", { headers: { authorization: `Bearer ${b.token}` } });
    expect(listB.body.upgrades[0]).toMatchObject({ status: "rejected", review_note: "Come back with usage numbers; it's quick." });

    expect((await psql("features_grant", { tenant_id: a.tenantId, feature: "sso", reviewer: "ops-alice" })).code).toBe(0);
    expect((await psql("features_grant", { tenant_id: a.tenantId, feature: "custom_policy", reviewer: "ops-alice" })).code).not.toBe(0);
    const shown = await psql("tenants_show", { tenant_id: a.tenantId });
    expect(shown.stdout).toContain(`${a.tenantId}|${a.email}|enterprise|`);
    expect(shown.stdout).toContain("|sso|");
    const revoked = await psql("features_revoke", { tenant_id: a.tenantId, feature: "sso", reviewer: "ops-alice" });
    expect(revoked.stdout.trim()).toBe(`${a.tenantId}|sso|t`);
    // Each review is in the tenant's audit trail as the reviewer's, once the service has signed it.
    const { service, db } = await testService();
    for (;;) {
      await service.deps.auditOutbox.drain();
      if ((await db.one("audit/outbox_pending"))!.pending === 0) break;
      await Bun.sleep(20);
    }
    const trail = (await call("GET", "/customer/audit", { headers: { authorization: `Bearer ${a.token}` } })).body.events;
    expect(trail.map((e: { event: string; actor: unknown }) => [e.event, e.actor])).toEqual([
      ["feature.revoked", { operator: "ops-alice" }],
      ["feature.granted", { operator: "ops-alice" }],
      ["upgrade.approved", { operator: "ops-alice" }],
      ["upgrade.requested", { member_id: expect.stringMatching(/^mbr_/) }],
      ["key.created", { member_id: expect.stringMatching(/^mbr_/) }], // the signup's first key
    ]);

    // A signing key marked compromised (a retired key of this test's own, so no live signer is touched).
    const key = await generateSigningKey();
    await testQuery(db, "signing_key_insert_retired", [key.kid, key.publicJwk]);
    const marked = await psql("signing_key_revoke", { kid: key.kid, compromised_since: "2025-06-01T00:00:00Z" });
    const [kid, status, , since] = marked.stdout.trim().split("|");
    expect([marked.code, kid, status, since]).toEqual([0, key.kid, "retired", "2025-06-01T00:00:00.000Z"]);
    expect((await psql("signing_key_revoke", { kid: key.kid, compromised_since: "2999-01-01T00:00:00Z" })).code).not.toBe(0);

    // A missing variable fails in psql before anything runs.
    expect((await psql("upgrades_approve", { request_id: reqB.request_id })).code).not.toBe(0);
  }, SLOW);
});

describe.skipIf(!!process.env.TEST_DATABASE_URL)("the CLI against the embedded database", () => {
  let dir: string;
  let tenantId: string;
  let requestId: string;
  let token: string;
  const cli = (args: string[]) => run([process.execPath, "src/cli/main.ts", "ops", ...args], { DATA_DIR: join(dir, "data"), DATABASE_URL: "" });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "warden-ops-"));
    // A service on the on-disk database makes the tenant and its request, then lets go of it.
    const db = await openDb({ dataDir: join(dir, "data") });
    const service: Service = await createService(testConfig({ dataDir: join(dir, "data") }), { db, log: createLogger("silent") });
    const email = uniqueEmail("ops");
    const signed = await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD }, service });
    tenantId = signed.body.tenant_id;
    token = signed.body.token;
    requestId = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "cli" }, headers: { authorization: `Bearer ${signed.body.token}` }, service })).body.request_id;
    await service.close();
    await db.close();
  }, SLOW);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("list, approve, refuse a second approval, show, grant", async () => {
    const listed = await cli(["upgrades", "list"]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).rows).toEqual([expect.objectContaining({ request_id: requestId, tenant_id: tenantId, current_plan: "free", requested_plan: "pro" })]);

    const approved = await cli(["upgrades", "approve", requestId, "--reviewer", "cli-carol"]);
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout).rows[0]).toMatchObject({ status: "approved", plan: "pro", reviewed_by: "cli-carol" });

    const again = await cli(["upgrades", "approve", requestId]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: false, error: "not_pending" });

    const shown = await cli(["tenants", "show", tenantId]);
    expect(JSON.parse(shown.stdout).rows[0]).toMatchObject({ tenant_id: tenantId, plan: "pro" });
    expect((await cli(["tenants", "show", "cust_AAAAAAAAAAAAAAAAAAAAAA"])).code).toBe(1);

    expect((await cli(["features", "grant", tenantId, "sso"])).code).toBe(0);
    expect((await cli(["features", "grant", tenantId, "teleport"])).code).toBe(1);
    expect(JSON.parse((await cli(["upgrades", "list"])).stdout).rows).toEqual([]);

    // No service ran: the reviews' audit events wait, and the next service to start signs them into the log.
    const db = await openDb({ dataDir: join(dir, "data") });
    const service: Service = await createService(testConfig({ dataDir: join(dir, "data") }), { db, log: createLogger("silent") });
    try {
      await service.deps.auditOutbox.drain();
      const trail = (await call("GET", "/customer/audit", { headers: { authorization: `Bearer ${token}` }, service })).body.events;
      expect(trail.map((e: { event: string; actor: unknown }) => [e.event, e.actor])).toEqual([
        ["feature.granted", { operator: process.env.USER || userInfo().username }],
        ["upgrade.approved", { operator: "cli-carol" }],
        ["upgrade.requested", { member_id: expect.stringMatching(/^mbr_/) }],
        ["key.created", { member_id: expect.stringMatching(/^mbr_/) }], // the signup's first key
      ]);
      // One person throughout: the owner who signed up and asked.
      expect(new Set(trail.slice(-2).map((e: { actor: { member_id: string } }) => e.actor.member_id)).size).toBe(1);
    } finally {
      await service.close();
      await db.close();
    }
  }, SLOW);

  test("bad usage exits 2", async () => {
    expect((await cli(["upgrades", "approve"])).code).toBe(2);
    expect((await cli(["upgrades", "reject", "upgr_x"])).code).toBe(2);
    expect((await cli(["features", "grant", "cust_x"])).code).toBe(2);
    expect((await cli(["upgrades", "approve", "upgr_x", "--bogus"])).code).toBe(2);
  }, SLOW);
});
