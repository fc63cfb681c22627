// The operator procedures behind sql/ops/ called as the CLI calls them (in process, either
// database), how an operator script waits for the service's transactions on the embedded
// database, and the CLI's help, version and progress.
import { beforeAll, describe, expect, test } from "bun:test";
import { DbError } from "../../src/db/index.ts";
import { schemaVersion } from "../../src/db/migrate.ts";
import { runOpsScript } from "../../src/ops/scripts.ts";
import { parseSqlCommand } from "../../src/cli/ops-scripts.ts";
import { progress } from "../../src/cli/progress.ts";
import { call, signup, testService, uniqueEmail } from "../helpers/service.ts";
import { runCli } from "../security/processes.ts";

const SLOW = 60_000;

// The shared service (its database and baseline) takes a while to start on a busy machine.
beforeAll(() => testService(), 180_000);

async function refusal(promise: Promise<unknown>): Promise<DbError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DbError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("operator procedures", () => {
  test("mail retry: a pending message becomes due with fresh attempts; a sent one or an unknown id is refused", async () => {
    const { db } = await testService();
    const to = uniqueEmail("retry");
    const [{ id }] = (await db.query("outbox/enqueue", ["mail", "upgrade_approved", to, null, { plan: "pro" }])) as { id: number }[];
    const [row] = await runOpsScript<{ id: number; status: string; attempts: number }>(db, "ops/mail_retry", { id: String(id) });
    expect(row).toMatchObject({ id, status: "pending", attempts: 0 });
    const listed = await runOpsScript<{ id: number; to_email: string }>(db, "ops/mail_list", { status: "pending" });
    expect(listed.find((r) => Number(r.id) === Number(id))).toMatchObject({ to_email: to });
    expect(listed[0]).not.toHaveProperty("data");
    await db.query("outbox/sent", [id]);
    expect((await refusal(runOpsScript(db, "ops/mail_retry", { id: String(id) }))).sqlstate).toBe("WM003");
    expect((await refusal(runOpsScript(db, "ops/mail_retry", { id: "999999999" }))).sqlstate).toBe("WM002");
    expect((await refusal(runOpsScript(db, "ops/mail_list", { status: "bogus" }))).sqlstate).toBe("WM001");
  });

  test("sessions end signs every member of the tenant out, each time; an unknown tenant is refused", async () => {
    const { db } = await testService();
    const a = await signup();
    const account = (token: string) => call("GET", "/customer/account", { headers: { authorization: `Bearer ${token}` } });
    const login = async () => (await call("POST", "/auth/login", { json: { email: a.email, password: a.password } })).body.token as string;
    const [first] = await runOpsScript<{ members_signed_out: number }>(db, "ops/sessions_end", { tenant_id: a.tenantId, reviewer: "ops-test" });
    expect(Number(first.members_signed_out)).toBe(1);
    expect((await account(a.token)).status).toBe(401);
    // A session opened after the first end is ended by the second.
    const later = await login();
    expect((await account(later)).status).toBe(200);
    const [second] = await runOpsScript<{ members_signed_out: number }>(db, "ops/sessions_end", { tenant_id: a.tenantId, reviewer: "ops-test" });
    expect(Number(second.members_signed_out)).toBe(1);
    expect((await account(later)).status).toBe(401);
    expect((await account(await login())).status).toBe(200);
    expect((await refusal(runOpsScript(db, "ops/sessions_end", { tenant_id: "cust_AAAAAAAAAAAAAAAAAAAAAA", reviewer: "ops-test" }))).sqlstate).toBe("WA005");
  });

  test.skipIf(!!process.env.TEST_DATABASE_URL)("an operator script waits for a transaction of the service and runs whole before the next", async () => {
    const { db } = await testService();
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const tx = db.tx(async (q) => {
      await q.query("system/ping");
      order.push("service tx begun");
      await held;
      order.push("service tx ends");
    });
    await Bun.sleep(20);
    const script = runOpsScript(db, "ops/upgrades_list", {}).then(() => order.push("operator script done"));
    await Bun.sleep(100);
    order.push("released");
    release();
    await Promise.all([tx, script]);
    expect(order).toEqual(["service tx begun", "released", "service tx ends", "operator script done"]);
  });
});

describe("ops sql FILE", () => {
  test("names a script of sql/ops/ by path or by name; anything else is bad usage", () => {
    expect(parseSqlCommand(["sql/ops/upgrades_list.sql"])).toEqual({ file: "ops/upgrades_list", vars: {} });
    expect(parseSqlCommand(["./sql/ops/tenants_show.sql", "-v", "tenant_id=cust_x"])).toEqual({ file: "ops/tenants_show", vars: { tenant_id: "cust_x" } });
    expect(parseSqlCommand(["mail_list", "-v", "status=all", "-v", "note=a=b"])).toEqual({ file: "ops/mail_list", vars: { status: "all", note: "a=b" } });
    expect(() => parseSqlCommand(["/etc/passwd.sql"])).toThrow("sql/ops/");
    expect(() => parseSqlCommand(["sql/queries/keys/list.sql"])).toThrow("sql/ops/");
    expect(() => parseSqlCommand(["upgrades_list", "-v", "novalue"])).toThrow("name=value");
    expect(() => parseSqlCommand([])).toThrow("one FILE");
  });
});

describe("progress", () => {
  test("writes to a terminal, and nothing when stderr is piped", () => {
    const written: string[] = [];
    const tty = progress({ isTTY: true, write: (t: string) => written.push(t) });
    tty.update("receipts checked: 1000 of 5000");
    tty.done();
    expect(written.join("")).toContain("receipts checked: 1000 of 5000");
    const piped: string[] = [];
    const quiet = progress({ isTTY: false, write: (t: string) => piped.push(t) });
    quiet.update("receipts checked: 1000 of 5000");
    quiet.done();
    expect(piped).toEqual([]);
  });
});

describe("the CLI as a person meets it", () => {
  test("--version, help COMMAND and COMMAND --help print to stdout and exit 0; help of an unknown command exits 2", async () => {
    const env = { DATABASE_URL: "" };
    const [version, helpSimulate, simulateHelp, opsHelp, approveHelp, all, unknown] = await Promise.all([
      runCli(["--version"], env),
      runCli(["help", "simulate"], env),
      runCli(["simulate", "--help"], env),
      runCli(["help", "ops"], env),
      runCli(["ops", "upgrades", "approve", "--help"], env),
      runCli(["help"], env),
      runCli(["help", "frobnicate"], env),
    ]);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(`warden 0.1.0 (schema ${schemaVersion()})`);
    for (const run of [helpSimulate, simulateHelp]) {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("simulate --preset NAME");
      expect(run.stderr).toBe("");
    }
    expect(opsHelp.code).toBe(0);
    expect(opsHelp.stdout).toContain("ops upgrades approve ID");
    expect(opsHelp.stdout).toContain("ops backup FILE");
    expect(approveHelp.code).toBe(0);
    expect(approveHelp.stdout).toContain("usage: warden ops upgrades approve ID [--reviewer NAME]");
    expect(approveHelp.stdout).not.toContain("ops backup");
    expect(all.code).toBe(0);
    expect(all.stdout).toContain("restore FILE");
    expect(unknown.code).toBe(2);
  }, SLOW);
});
