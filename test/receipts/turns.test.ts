// TenantTurns: one tenant's log reads take turns (in arrival order, a failure passing its turn on),
// while other tenants' run beside them.
import { describe, expect, test } from "bun:test";
import { TenantTurns } from "../../src/receipts/turns.ts";
import { bearer, protect } from "../helpers/customer.ts";
import { call, signup, testService } from "../helpers/service.ts";

/** A piece of work that runs until released, recording when it started. */
function gate(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { work: async () => { log.push(`start ${name}`); await done; log.push(`end ${name}`); return name; }, release };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("TenantTurns", () => {
  test("one tenant's reads run one at a time, in arrival order; another tenant's do not wait", async () => {
    const turns = new TenantTurns(1_000_000);
    const log: string[] = [];
    const [a1, a2, a3, b1] = ["a1", "a2", "a3", "b1"].map((n) => gate(log, n));
    const results = [turns.run("a", a1.work), turns.run("a", a2.work), turns.run("a", a3.work), turns.run("b", b1.work)];
    await tick();
    expect(log).toEqual(["start a1", "start b1"]);
    a1.release();
    await tick();
    expect(log).toEqual(["start a1", "start b1", "end a1", "start a2"]);
    a2.release();
    a3.release();
    b1.release();
    expect(await Promise.all(results)).toEqual(["a1", "a2", "a3", "b1"]);
    expect(log.filter((l) => l.startsWith("start"))).toEqual(["start a1", "start b1", "start a2", "start a3"]);
  });

  test("a read that fails passes its turn on, and its error reaches its caller", async () => {
    const turns = new TenantTurns(1_000_000);
    const failing = turns.run("a", async () => {
      await tick();
      throw new Error("boom");
    });
    const next = turns.run("a", async () => "next");
    await expect(failing).rejects.toThrow("boom");
    expect(await next).toBe("next");
  });

  test("beyond a burst of perSecond reads, a tenant's reads are spaced 1/perSecond apart; other tenants keep theirs", async () => {
    // 5 a second: a burst of 6 at once, then one each 200 ms.
    const turns = new TenantTurns(5);
    const started: Record<string, number> = {};
    const read = (tenant: string, name: string) => turns.run(tenant, async () => void (started[name] = performance.now()));
    const t0 = performance.now();
    const burst = Array.from({ length: 8 }, (_, i) => read("a", `a${i}`));
    await tick();
    await read("b", "b0");
    await Promise.all(burst);
    // Lower bounds from t0 only: a sleep never ends early, however busy the machine (a late one
    // does not push the schedule of the next: a7 is due 400 ms after the burst, not after a6).
    expect(started.a6 - t0).toBeGreaterThanOrEqual(195);
    expect(started.a7 - t0).toBeGreaterThanOrEqual(395);
    // b's first read did not wait behind a's budget.
    expect(started.b0).toBeLessThan(started.a6);
    expect(turns.busy).toBe(1); // a still owes its budget; b's single read is paid back (200 ms)
  });

  test("an idle tenant is forgotten once its budget is whole again", async () => {
    const turns = new TenantTurns(100);
    await turns.run("a", async () => undefined);
    expect(turns.busy).toBe(1);
    // Whole again after 10 ms; a loaded machine may fire the timer later.
    for (let i = 0; i < 100 && turns.busy > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(turns.busy).toBe(0);
  });
});

describe("log reads over HTTP take their tenant's turns", () => {
  test("checkpoint, proof and consistency each run inside deps.logReads for the caller's tenant", async () => {
    const { service } = await testService();
    const a = await signup();
    const allowed = await protect(a.apiKey);
    const seen: string[] = [];
    const turns = service.deps.logReads;
    const original = turns.run.bind(turns);
    turns.run = ((tenantId: string, work: () => Promise<unknown>) => {
      seen.push(tenantId);
      return original(tenantId, work);
    }) as typeof turns.run;
    try {
      for (const path of ["/customer/receipts/checkpoint", `/customer/receipts/${allowed.body.receipt_id}/proof`, "/customer/receipts/consistency?from=1"]) {
        expect((await call("GET", path, { headers: bearer(a.token) })).status).toBe(200);
      }
    } finally {
      turns.run = original;
    }
    expect(seen).toEqual([a.tenantId, a.tenantId, a.tenantId]);
  });
});
