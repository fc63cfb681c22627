// The database goes away under a running service (its own process, reaching PostgreSQL through a
// TCP proxy this test controls, so the shared server keeps running): requests in flight and new
// ones get 503 `unavailable` with Retry-After at once, nothing hangs, the process lives on, and it
// serves again by itself as soon as the database is back.
import { afterAll, describe, expect, test } from "bun:test";
import { apiKey, bearer } from "../helpers/customer.ts";
import { GOOD_PASSWORD, testService, uniqueEmail } from "../helpers/service.ts";
import { expectCleanError, expectNoSecretIn, remember, wire } from "./helpers.ts";
import { databaseParts, spawnService, startProxy, type Child } from "./processes.ts";
import { testOne, testTransaction } from "../helpers/sql.ts";

const DATABASE_URL = process.env.TEST_DATABASE_URL;
/** "Quickly": far below any client's timeout, with room for a loaded 2-core machine. */
const QUICK_MS = 3000;

let child: Child | undefined;
let proxy: Awaited<ReturnType<typeof startProxy>> | undefined;
afterAll(async () => {
  if (child && child.proc.exitCode === null) child.proc.kill("SIGKILL");
  await child?.exited;
  await proxy?.close();
});

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}

describe.skipIf(!DATABASE_URL)("database down (PostgreSQL behind a proxy the test cuts)", () => {
  test("503 unavailable at once while it is down, recovery without a restart when it is back", async () => {
    const { host, port, url } = databaseParts(DATABASE_URL!);
    proxy = await startProxy({ host, port });
    const viaProxy = new URL(url);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxy.port);
    child = await spawnService({ DATABASE_URL: viaProxy.toString() });
    const base = child.url;

    const email = uniqueEmail("down");
    const signup = await wire(base, "POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD } });
    expect(signup.status).toBe(201);
    const { token, api_key: key } = signup.body;
    for (const s of [GOOD_PASSWORD, token, key]) remember(s);
    const protect = () => wire(base, "POST", "/v1/protect", { json: { action: "document.read" }, headers: apiKey(key) });
    expect((await protect()).status).toBe(200);

    // A request in flight when the database goes: it waits on a lock the test holds directly.
    const { db } = await testService();
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = testTransaction(DATABASE_URL!, async (run) => {
      await run("receipt_head_lock", [signup.body.tenant_id]);
      locked();
      await held;
    });
    await isLocked;
    const before = (await testOne<{ waiting: number }>(db, "lock_waiters"))!.waiting;
    const inFlight = timed(protect);
    for (let i = 0; i < 100 && (await testOne<{ waiting: number }>(db, "lock_waiters"))!.waiting <= before; i++) await Bun.sleep(20);

    const cutAt = performance.now();
    await proxy.cut();
    const stranded = await inFlight;
    expectCleanError(stranded.value, 503, "unavailable");
    expect(performance.now() - cutAt).toBeLessThan(QUICK_MS);
    release();
    await holder;

    // Every kind of request while it is down: 503 with Retry-After, quickly, one by one and at once.
    const asks = [
      () => wire(base, "GET", "/health"),
      protect,
      () => wire(base, "POST", "/auth/login", { json: { email, password: GOOD_PASSWORD } }),
      () => wire(base, "POST", "/auth/signup", { json: { email: uniqueEmail("down"), password: GOOD_PASSWORD } }),
      () => wire(base, "GET", "/customer/keys", { headers: bearer(token) }),
      () => wire(base, "GET", "/customer/receipts/checkpoint", { headers: bearer(token) }),
      () => wire(base, "GET", "/readyz"),
    ];
    for (const ask of asks) {
      const { value, ms } = await timed(ask);
      expectCleanError(value, 503, "unavailable");
      expect(Number(value.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(value.body.retry_after).toBe(Number(value.headers.get("retry-after")));
      expect(ms).toBeLessThan(QUICK_MS);
    }
    const burst = await timed(() => Promise.all(Array.from({ length: 30 }, (_, i) => asks[i % asks.length]())));
    for (const reply of burst.value) expectCleanError(reply, 503, "unavailable");
    expect(burst.ms).toBeLessThan(QUICK_MS * 2);
    expect(child.proc.exitCode).toBeNull();
    // The metrics listener: not ready, but alive and still scraped.
    const probes = await timed(() => Promise.all(["/readyz", "/livez", "/metrics"].map((path) => fetch(child!.metricsUrl + path).then((r) => r.status))));
    expect(probes.value).toEqual([503, 200, 200]);
    expect(probes.ms).toBeLessThan(QUICK_MS);

    // Back: the same process serves again, with no restart.
    await proxy.restore();
    const deadline = Date.now() + 15_000;
    let health = await wire(base, "GET", "/health");
    while (health.status !== 200 && Date.now() < deadline) {
      await Bun.sleep(100);
      health = await wire(base, "GET", "/health");
    }
    expect(health.status).toBe(200);
    expect((await wire(base, "GET", "/readyz")).status).toBe(200);
    expect((await fetch(`${child.metricsUrl}/readyz`)).status).toBe(200);
    expect((await protect()).status).toBe(200);
    const login = await wire(base, "POST", "/auth/login", { json: { email, password: GOOD_PASSWORD } });
    expect(login.status).toBe(200);
    remember(login.body.token);
    expect((await wire(base, "GET", "/customer/keys", { headers: bearer(login.body.token) })).status).toBe(200);
    expect(child.proc.exitCode).toBeNull();

    // The outage left its trace in the log without a secret, and nothing crashed.
    expect(child.lines.some((l) => l.includes('"status":503'))).toBe(true);
    expect(child.lines.some((l) => /uncaught|unhandled/i.test(l))).toBe(false);
    expectNoSecretIn(child.lines);
  }, 90_000);
});
