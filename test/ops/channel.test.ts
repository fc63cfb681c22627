// Operators while the service runs, as an operator meets it: a real `warden serve` process (on a
// temp DATA_DIR, or on TEST_DATABASE_URL) and the CLI as separate processes. On the embedded
// database every `warden ops` here reaches the service's data through its socket in DATA_DIR.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, cpSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb } from "../../src/db/index.ts";
import { migrate, schemaVersion } from "../../src/db/migrate.ts";
import { connectOpsChannel } from "../../src/ops/client.ts";
import { opsSocketPath } from "../../src/ops/channel.ts";
import { SMALL_PAYMENT } from "../helpers/customer.ts";
import { GOOD_PASSWORD, uniqueEmail } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";
import { runCli, spawnService, type Child } from "../security/processes.ts";
import { wire } from "../security/helpers.ts";

const SLOW = 180_000;
// A new PGlite directory costs its initdb and the baseline (tens of seconds on a busy machine):
// made once, then copied for each service this file starts.
const START_MS = 120_000;
let template: string;

async function service(env: Record<string, string>) {
  if (!PG && env.DATA_DIR && !existsSync(env.DATA_DIR)) cpSync(template, env.DATA_DIR, { recursive: true });
  return spawnService(env, START_MS);
}
const PG = process.env.TEST_DATABASE_URL;
let dir: string;
let dataDir: string;
let child: Child;
// Mail to a port where nothing listens: messages stay pending, retried with backoff.
let smtpUrl: string;

/** Where `warden ops` works: the same database as the running service. */
const opsEnv = (): Record<string, string> => (PG ? { DATABASE_URL: PG, DATA_DIR: join(dir, "unused") } : { DATA_DIR: dataDir, DATABASE_URL: "" });
const ops = (...args: string[]) => runCli(["ops", ...args], opsEnv());

async function customer(url: string) {
  const email = uniqueEmail("ops");
  const signup = await wire(url, "POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD } });
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${signup.text}`);
  return { email, token: signup.body.token as string, tenantId: signup.body.tenant_id as string, apiKey: signup.body.api_key as string };
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-ops-"));
  dataDir = join(dir, "data");
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  smtpUrl = `smtp://127.0.0.1:${probe.port}`;
  probe.stop(true);
  template = join(dir, "template");
  if (!PG) {
    const db = await openDb({ dataDir: template });
    await migrate(db);
    await db.close();
  }
  child = await service({ DATA_DIR: dataDir, SMTP_URL: smtpUrl, ...(PG ? { DATABASE_URL: PG } : {}) });
}, SLOW);

afterAll(async () => {
  child?.proc.kill("SIGTERM");
  await child?.exited;
  rmSync(dir, { recursive: true, force: true });
}, SLOW);

describe("operators while the service runs", () => {
  test("an approval while protect traffic runs: every protect answers 200 and the very next request sees the new plan", async () => {
    const c = await customer(child.url);
    const request = await wire(child.url, "POST", "/customer/upgrades/request", { json: { requested_plan: "enterprise", reason: "volume" }, headers: auth(c.token) });
    expect(request.status).toBe(201);

    let running = true;
    const statuses: number[] = [];
    const traffic = Array.from({ length: 4 }, async () => {
      while (running) statuses.push((await wire(child.url, "POST", "/v1/protect", { json: SMALL_PAYMENT, headers: { "x-api-key": c.apiKey } })).status);
    });
    try {
      const listed = await ops("upgrades", "list");
      expect(listed.code).toBe(0);
      expect(listed.json.rows.map((r: { request_id: string }) => r.request_id)).toContain(request.body.request_id);

      const approved = await ops("upgrades", "approve", request.body.request_id, "--reviewer", "ops-test");
      expect(approved.code).toBe(0);
      expect(approved.json.rows[0]).toMatchObject({ request_id: request.body.request_id, status: "approved", plan: "enterprise", reviewed_by: "ops-test" });
      // The very next requests: the plan and its limits, with no restart.
      const account = await wire(child.url, "GET", "/customer/account", { headers: auth(c.token) });
      expect(account.body.plan).toBe("enterprise");
      const dashboard = await wire(child.url, "GET", "/customer/dashboard", { headers: auth(c.token) });
      expect(dashboard.body.limits.protect_per_day).toBeNull();

      // The same refusals as psql gets: the procedure says no, exit 1.
      const again = await ops("upgrades", "approve", request.body.request_id);
      expect(again.code).toBe(1);
      expect(again.json).toMatchObject({ ok: false, error: "not_pending" });
    } finally {
      running = false;
      await Promise.all(traffic);
    }
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  }, SLOW);

  test("ops sql runs any script of sql/ops/ with -v variables; a missing variable or another file is bad usage", async () => {
    const c = await customer(child.url);
    const shown = await ops("sql", "sql/ops/tenants_show.sql", "-v", `tenant_id=${c.tenantId}`);
    expect(shown.code).toBe(0);
    expect(shown.json.rows[0]).toMatchObject({ tenant_id: c.tenantId, email: c.email, plan: "free" });
    const granted = await ops("sql", "features_grant", "-v", `tenant_id=${c.tenantId}`, "-v", "feature=sso", "-v", "reviewer=ops-test");
    expect(granted.code).toBe(0);
    const refused = await ops("sql", "features_grant", "-v", `tenant_id=${c.tenantId}`, "-v", "feature=custom_policy", "-v", "reviewer=ops-test");
    expect(refused.code).toBe(1);
    expect((await ops("sql", "sql/ops/upgrades_approve.sql", "-v", "reviewer=x")).code).toBe(2);
    expect((await ops("sql", "/tmp/anything.sql")).code).toBe(2);
    expect((await ops("sql", "no_such_script")).code).toBe(2);
  }, SLOW);

  test("sessions end signs a customer out everywhere at once; API keys keep working", async () => {
    const c = await customer(child.url);
    expect((await wire(child.url, "GET", "/customer/account", { headers: auth(c.token) })).status).toBe(200);
    const ended = await ops("sessions", "end", c.tenantId);
    expect(ended.code).toBe(0);
    expect(ended.json.rows[0]).toMatchObject({ tenant_id: c.tenantId, members_signed_out: 1 });
    expect((await wire(child.url, "GET", "/customer/account", { headers: auth(c.token) })).status).toBe(401);
    expect((await wire(child.url, "POST", "/v1/protect", { json: SMALL_PAYMENT, headers: { "x-api-key": c.apiKey } })).status).toBe(200);
    const unknown = await ops("sessions", "end", "cust_AAAAAAAAAAAAAAAAAAAAAA");
    expect(unknown.code).toBe(1);
    expect(unknown.json.message).toContain("no tenant");
  }, SLOW);

  test("mail list shows the outbox without data; mail retry makes a waiting message due now", async () => {
    const c = await customer(child.url);
    expect((await wire(child.url, "POST", "/auth/verify-email/request", { json: {}, headers: auth(c.token) })).status).toBe(202);
    let mine: Record<string, unknown> | undefined;
    for (let i = 0; i < 40 && !(mine && Number(mine.attempts) > 0); i++) {
      const listed = await ops("mail", "list", "--status", "pending");
      expect(listed.code).toBe(0);
      mine = listed.json.rows.find((r: { to_email: string }) => r.to_email === c.email);
      if (!(mine && Number(mine.attempts) > 0)) await Bun.sleep(250);
    }
    expect(mine).toMatchObject({ kind: "verify_email", status: "pending" });
    expect(Number(mine!.attempts)).toBeGreaterThan(0);
    expect(mine).not.toHaveProperty("data");
    const retried = await ops("mail", "retry", String(mine!.id));
    expect(retried.code).toBe(0);
    expect(retried.json.rows[0]).toMatchObject({ id: mine!.id, status: "pending", attempts: 0 });
    expect(Date.parse(retried.json.rows[0].next_attempt_at)).toBeLessThanOrEqual(Date.now() + 1000);
    expect((await ops("mail", "retry", "999999999")).code).toBe(1);
    expect((await ops("mail", "list", "--status", "bogus")).code).toBe(1);
  }, SLOW);

  test("receipts check while the service appends; progress only on a terminal (none when piped)", async () => {
    const c = await customer(child.url);
    for (let i = 0; i < 5; i++) await wire(child.url, "POST", "/v1/protect", { json: SMALL_PAYMENT, headers: { "x-api-key": c.apiKey } });
    let running = true;
    const traffic = (async () => {
      while (running) await wire(child.url, "POST", "/v1/protect", { json: SMALL_PAYMENT, headers: { "x-api-key": c.apiKey } });
    })();
    try {
      const checked = await ops("receipts", "check", c.tenantId);
      expect(checked.code).toBe(0);
      expect(checked.json).toMatchObject({ ok: true, tenant_id: c.tenantId, problems: [] });
      expect(checked.json.receipts).toBeGreaterThanOrEqual(5);
      expect(checked.stderr).toBe("");
    } finally {
      running = false;
      await traffic;
    }
  }, SLOW);

  test("ops refuse a database at another schema version: exit 2, naming both versions; they never migrate", async () => {
    const wanted = schemaVersion();
    if (PG) {
      const db = await openDb({ databaseUrl: PG, dataDir: "memory://", poolSize: 1 });
      try {
        await testQuery(db, "schema_version_set", ["baseline-0000000000000000"]);
        const run = await ops("upgrades", "list");
        expect(run.code).toBe(2);
        expect(run.stderr).toContain("baseline-0000000000000000");
        expect(run.stderr).toContain(wanted);
      } finally {
        await testQuery(db, "schema_version_set", [wanted]);
        await db.close();
      }
      return;
    }
    // The channel refuses a CLI of another build.
    const channel = (await connectOpsChannel(dataDir))!;
    try {
      await expect(channel.request({ op: "hello", schema: "baseline-0000000000000000" })).rejects.toThrow(`needs schema baseline-0000000000000000`);
    } finally {
      await channel.close();
    }
    // A data directory of another schema, no service running: refused, not migrated.
    const other = join(dir, "other");
    cpSync(template, other, { recursive: true });
    const db = await openDb({ dataDir: other });
    await testQuery(db, "schema_version_set", ["baseline-0000000000000000"]);
    await db.close();
    const run = await runCli(["ops", "upgrades", "list"], { DATA_DIR: other, DATABASE_URL: "" });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("holds warden schema baseline-0000000000000000");
    expect(run.stderr).toContain(`needs schema ${wanted}`);
    // No database at all: refused, and none is made.
    const none = join(dir, "none");
    const empty = await runCli(["ops", "upgrades", "list"], { DATA_DIR: none, DATABASE_URL: "" });
    expect(empty.code).toBe(2);
    expect(existsSync(join(none, "pgdata"))).toBe(false);
    // migrate makes it; then ops work.
    const migrated = await runCli(["migrate"], { DATA_DIR: none, DATABASE_URL: "" });
    expect(migrated.code).toBe(0);
    expect(migrated.json).toMatchObject({ ok: true, applied: [wanted], schema: wanted });
    expect((await runCli(["ops", "upgrades", "list"], { DATA_DIR: none, DATABASE_URL: "" })).code).toBe(0);
  }, SLOW);
});

describe.skipIf(!!PG)("the embedded database's operator channel", () => {
  test("the socket is its owner's alone (folder 0700, socket 0600); the CLI refuses one others can reach", async () => {
    const path = opsSocketPath(dataDir);
    expect(statSync(join(dataDir, "ops")).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    chmodSync(join(dataDir, "ops"), 0o755);
    try {
      const run = await ops("upgrades", "list");
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("refusing the operator socket");
    } finally {
      chmodSync(join(dataDir, "ops"), 0o700);
    }
  }, SLOW);

  test("backup while serving; restore into a new DATA_DIR on which the service starts and every chain passes", async () => {
    const c = await customer(child.url);
    for (let i = 0; i < 3; i++) await wire(child.url, "POST", "/v1/protect", { json: SMALL_PAYMENT, headers: { "x-api-key": c.apiKey } });
    let running = true;
    const traffic = (async () => {
      while (running) expect((await wire(child.url, "POST", "/v1/protect", { json: SMALL_PAYMENT, headers: { "x-api-key": c.apiKey } })).status).toBe(200);
    })();
    const file = join(dir, "backup.tar.gz");
    try {
      const backup = await ops("backup", file);
      expect(backup.code).toBe(0);
      expect(backup.json).toMatchObject({ ok: true, taken_by: "the running service" });
      expect(backup.stderr).toBe(""); // no progress when piped
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      running = false;
      await traffic;
    }
    const restored = join(dir, "restored");
    const restore = await runCli(["restore", file], { DATA_DIR: restored, DATABASE_URL: "" });
    expect(restore.code).toBe(0);
    expect(restore.json).toMatchObject({ ok: true, schema: schemaVersion() });
    expect(restore.stderr).toBe("");
    // A non-empty DATA_DIR is refused.
    const again = await runCli(["restore", file], { DATA_DIR: restored, DATABASE_URL: "" });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("not empty");

    const second = await service({ DATA_DIR: restored });
    try {
      const login = await wire(second.url, "POST", "/auth/login", { json: { email: c.email, password: GOOD_PASSWORD } });
      expect(login.status).toBe(200);
      const check = await runCli(["ops", "receipts", "check", c.tenantId], { DATA_DIR: restored, DATABASE_URL: "" });
      expect(check.code).toBe(0);
      expect(check.json.receipts).toBeGreaterThanOrEqual(3);
      expect((await wire(second.url, "POST", "/v1/protect", { json: SMALL_PAYMENT, headers: { "x-api-key": c.apiKey } })).status).toBe(200);
    } finally {
      second.proc.kill("SIGTERM");
      expect(await second.exited).toBe(0);
    }
  }, SLOW);

  test("graceful stop removes the socket; a stale one is replaced at start; with no service the directory is opened directly", async () => {
    const own = join(dir, "lifecycle");
    const first = await service({ DATA_DIR: own });
    const path = opsSocketPath(own);
    expect(existsSync(path)).toBe(true);
    first.proc.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(existsSync(path)).toBe(false);
    // Nothing listens: the CLI opens the directory itself.
    const direct = await runCli(["ops", "upgrades", "list"], { DATA_DIR: own, DATABASE_URL: "" });
    expect(direct.code).toBe(0);
    // A stale socket file (a service killed without a graceful stop) is replaced at start.
    writeFileSync(path, "", { mode: 0o600 });
    const directAgain = await runCli(["ops", "upgrades", "list"], { DATA_DIR: own, DATABASE_URL: "" });
    expect(directAgain.code).toBe(0);
    const second = await service({ DATA_DIR: own });
    try {
      expect(statSync(path).isSocket()).toBe(true);
      expect((await runCli(["ops", "upgrades", "list"], { DATA_DIR: own, DATABASE_URL: "" })).code).toBe(0);
    } finally {
      second.proc.kill("SIGTERM");
      await second.exited;
    }
  }, SLOW);
});

describe.skipIf(!PG)("backup on PostgreSQL", () => {
  test("ops backup and restore point to pg_dump / pg_restore: exit 2", async () => {
    const backup = await ops("backup", join(dir, "x.tar.gz"));
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain("pg_dump");
    const restore = await runCli(["restore", join(dir, "x.tar.gz")], { DATABASE_URL: PG!, DATA_DIR: join(dir, "r") });
    expect(restore.code).toBe(2);
    expect(restore.stderr).toContain("pg_restore");
  }, SLOW);
});
