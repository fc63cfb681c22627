// Crash safety on the real PostgreSQL server, with the service in processes of its own:
// SIGKILL in the middle of a protect load loses no receipt whose 200 reached the client, breaks
// no chain, lets no counter drift, and leaves unsent mail to be sent after the restart; a
// migration killed half way leaves nothing behind and runs again; SIGTERM lets requests in flight
// finish before the process exits 0.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openDb, type Db } from "../../src/db/index.ts";
import { schemaVersion } from "../../src/db/migrate.ts";
import { apiKey, bearer, setPlan } from "../helpers/customer.ts";
import { startInbox } from "../helpers/mail.ts";
import { GOOD_PASSWORD, testService, uniqueEmail } from "../helpers/service.ts";
import { expectNoSecretIn, remember, wire } from "./helpers.ts";
import { databaseParts, runCli, spawnService, startSilentSmtp, type Child } from "./processes.ts";
import { isCitus, testOne, testQuery, testTransaction } from "../helpers/sql.ts";

const DATABASE_URL = process.env.TEST_DATABASE_URL;
const SLOW = 120_000;
const children: Child[] = [];
const start = async (env: Record<string, string>) => {
  const child = await spawnService({ DATABASE_URL: DATABASE_URL!, ...env });
  children.push(child);
  return child;
};
afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null) c.proc.kill("SIGKILL");
  await Promise.all(children.map((c) => c.exited));
});

async function signupOver(url: string, tag: string) {
  const email = uniqueEmail(tag);
  const reply = await wire(url, "POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD } });
  expect(reply.status).toBe(201);
  for (const s of [reply.body.token, reply.body.api_key]) remember(s);
  return { email, token: reply.body.token as string, tenantId: reply.body.tenant_id as string, apiKey: reply.body.api_key as string };
}

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

describe.skipIf(!DATABASE_URL)("crash safety on PostgreSQL (the service in its own process)", () => {
  test("SIGKILL during a protect load: acknowledged receipts stored, chains verify, counters match, mail resent", async () => {
    const { db } = await testService();
    remember(GOOD_PASSWORD);
    // The first instance's mail server never answers: whatever it claims stays unsent.
    const silent = await startSilentSmtp();
    const first = await start({ SMTP_URL: silent.url });

    const tenant = await signupOver(first.url, "crash");
    await setPlan(tenant.tenantId, "enterprise"); // no quota gets in the way of the load
    const mailed = await Promise.all(Array.from({ length: 12 }, (_, i) => signupOver(first.url, `crash-mail${i}`)));

    // The load: 8 clients in a loop; a 200 that arrives is recorded, anything else ends the client.
    const acknowledged: { receipt_id: string; seq: number; chain_hash: string }[] = [];
    let failures = 0;
    const clients = Array.from({ length: 8 }, async (_, c) => {
      for (let i = 0; ; i++) {
        try {
          const reply = await wire(first.url, "POST", "/v1/protect", { json: { action: "payment.send", amount: c * 1000 + i, currency: "USD" }, headers: apiKey(tenant.apiKey) });
          if (reply.status !== 200) throw new Error(`status ${reply.status}`);
          acknowledged.push({ receipt_id: reply.body.receipt_id, seq: reply.body.seq, chain_hash: reply.body.chain_hash });
        } catch {
          failures++;
          return;
        }
      }
    });
    await until("150 acknowledged receipts", async () => acknowledged.length >= 150);
    await until("the mail worker to be stuck sending", async () => silent.accepted() > 0);
    first.proc.kill("SIGKILL");
    expect(await first.exited).not.toBe(0);
    await Promise.all(clients);
    const acked = acknowledged.length;
    expect(failures).toBe(8); // every client saw the process die mid-request or on its next one

    // The outbox still holds every verification mail: claimed and hung, or never claimed.
    const rows = async (email: string) => testQuery<{ status: string; attempts: number }>(db, "mail_outbox", [email]);
    for (const m of mailed) expect((await rows(m.email)).map((r) => r.status)).toEqual(["pending"]);
    await silent.close();
    // A killed sender's lease would run out after 120 s; pretend it has.
    for (const m of mailed) await testQuery(db, "mail_outbox_make_due", [m.email]);

    const inbox = await startInbox();
    try {
      const second = await start({ SMTP_URL: inbox.url });
      // Every receipt whose 200 reached a client is there, unchanged.
      for (const r of acknowledged) {
        const got = await wire(second.url, "GET", `/customer/receipts/${r.receipt_id}`, { headers: bearer(tenant.token) });
        expect(got.status).toBe(200);
        expect({ seq: got.body.receipt.seq, chain_hash: got.body.receipt.chain_hash }).toEqual({ seq: r.seq, chain_hash: r.chain_hash });
      }
      // The whole chain verifies, from the database, with the operator's command.
      const check = await runCli(["ops", "receipts", "check", tenant.tenantId], { DATABASE_URL: DATABASE_URL! });
      expect(check.code).toBe(0);
      expect(check.json).toMatchObject({ ok: true, problems: [] });
      // The log: the signup's key.created event, then the decisions.
      const decisions = check.json.receipts - 1;
      expect(decisions).toBeGreaterThanOrEqual(acked);
      // Counters match what is stored: every protect call counted is a stored receipt, and back.
      const dashboard = (await wire(second.url, "GET", "/customer/dashboard", { headers: bearer(tenant.token) })).body;
      const counted = (dashboard.history as { protect: number }[]).reduce((sum, d) => sum + d.protect, 0);
      expect(dashboard.usage.receipts_stored).toBe(decisions);
      expect(counted).toBe(decisions);
      const checkpoint = (await wire(second.url, "GET", "/customer/receipts/checkpoint", { headers: bearer(tenant.token) })).body;
      expect(checkpoint.tree_size).toBe(check.json.receipts);
      expect(checkpoint.root_hash).toBe(check.json.root_hash);
      // And the log goes on from there.
      const next = await wire(second.url, "POST", "/v1/protect", { json: { action: "document.read" }, headers: apiKey(tenant.apiKey) });
      expect(next.status).toBe(200);
      expect(next.body.seq).toBe(check.json.receipts);

      // The restarted instance sends what the killed one never did, with working links.
      for (const m of mailed) {
        const [mail] = await inbox.waitFor(m.email, 1, 30_000);
        const token = remember(/token=([A-Za-z0-9_-]+)/.exec(mail.parsed.text ?? "")![1]);
        expect(token.length).toBe(43);
      }
      for (const m of mailed) await until(`the outbox row of ${m.email} marked sent`, async () => (await rows(m.email))[0].status === "sent");
      console.log(`crash: ${acked} receipts acknowledged before SIGKILL, ${decisions} stored`);

      second.proc.kill("SIGTERM");
      expect(await second.exited).toBe(0);
      expectNoSecretIn([...first.lines, ...second.lines]);
    } finally {
      await inbox.close();
    }
  }, SLOW);

  test("SIGTERM: a request in flight completes, new connections are refused, the process exits 0", async () => {
    const { db } = await testService();
    const child = await start({});
    const tenant = await signupOver(child.url, "drain");
    expect((await wire(child.url, "POST", "/v1/protect", { json: { action: "document.read" }, headers: apiKey(tenant.apiKey) })).status).toBe(200);

    // Hold the tenant's log head: the next protect waits inside the database, in flight.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = testTransaction(DATABASE_URL!, async (run) => {
      await run("receipt_head_lock", [tenant.tenantId]);
      locked();
      await held;
    });
    await isLocked;
    // On a Citus cluster the protect's append waits on its tenant's worker: the cluster's view of lock waits sees it.
    const waiters = (await isCitus(db)) ? "citus_lock_waiters" : "lock_waiters";
    const before = ((await testOne<{ waiting: number }>(db, waiters))!).waiting;
    const slow = wire(child.url, "POST", "/v1/protect", { json: { action: "document.read", resource: "slow" }, headers: apiKey(tenant.apiKey) });
    await until("the protect to wait on the lock", async () => ((await testOne<{ waiting: number }>(db, waiters))!).waiting > before);

    child.proc.kill("SIGTERM");
    await Bun.sleep(300);
    expect(child.proc.exitCode).toBeNull(); // still draining
    await expect(fetch(`${child.url}/health`, { tls: { rejectUnauthorized: false }, keepalive: false } as RequestInit)).rejects.toThrow();

    release();
    await holder;
    const reply = await slow;
    expect(reply.status).toBe(200);
    expect(await child.exited).toBe(0);
    // The answer it gave is stored: it committed before the pool closed.
    const stored = await db.one("receipts/get", [tenant.tenantId, reply.body.receipt_id]);
    expect(stored?.receipt_id).toBe(reply.body.receipt_id);
    expect(child.lines.some((l) => l.includes('"event":"unexpected_error"'))).toBe(false);
    expectNoSecretIn(child.lines);
  }, SLOW);

  test("a migration killed half way leaves nothing applied, and runs again to the end", async () => {
    const { host, port, user, database, url } = databaseParts(DATABASE_URL!);
    const scratch = `${database}_mig_${process.pid}`.slice(0, 63);
    const pgTool = (tool: string, ...args: string[]) => Bun.spawnSync([tool, "-h", host, "-p", String(port), "-U", user, ...args], { stdout: "pipe", stderr: "pipe" });
    pgTool("dropdb", "--if-exists", "--force", scratch);
    const created = pgTool("createdb", scratch);
    if (created.exitCode !== 0) throw new Error(`createdb failed: ${created.stderr.toString()}`);
    const scratchUrl = new URL(url);
    scratchUrl.pathname = `/${scratch}`;
    let db: Db | undefined;
    try {
      db = await openDb({ databaseUrl: scratchUrl.toString(), dataDir: "memory://", poolSize: 3 });
      // A transaction that has created one of the baseline's tables: the run applies the files
      // before it and then waits on that name, inside its own transaction.
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked = () => {};
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      class Rollback extends Error {}
      const holder = testTransaction(scratchUrl.toString(), async (run) => {
        await run("schema_table_claim");
        locked();
        await held;
        throw new Rollback();
      }).catch((err: unknown) => {
        if (!(err instanceof Rollback)) throw err;
      });
      await isLocked;
      const migrating = Bun.spawn([process.execPath, "src/cli/main.ts", "migrate"], { cwd: join(import.meta.dir, "..", ".."), env: { ...process.env, DATABASE_URL: scratchUrl.toString() }, stdout: "ignore", stderr: "ignore" });
      await until("the migration to block", async () => ((await testOne<{ waiting: number }>(db!, "lock_waiters"))!).waiting > 0);
      migrating.kill("SIGKILL");
      expect(await migrating.exited).not.toBe(0);
      release();
      await holder;

      // Nothing of the killed run is visible: no table, no version.
      for (const table of ["tenants", "api_keys", "receipts", "schema_version"]) expect((await testOne<{ relation: string | null }>(db, "relation_exists", [table]))!.relation).toBeNull();

      // The next run (its advisory lock waits for the dead session to be rolled back) applies the baseline.
      const again = await runCli(["migrate"], { DATABASE_URL: scratchUrl.toString() });
      expect(again.code).toBe(0);
      expect(await db.query("migrations/version")).toEqual([{ version: schemaVersion() }]);
      expect((await testOne<{ relation: string | null }>(db, "relation_exists", ["usage_daily"]))!.relation).toBe("usage_daily");
    } finally {
      await db?.close();
      pgTool("dropdb", "--if-exists", "--force", scratch);
    }
  }, SLOW);
});
