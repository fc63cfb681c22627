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
    const turns = new TenantTurns(1);
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
    expect(turns.busy).toBe(0);
  });

  test("a read that fails passes its turn on, and its error reaches its caller", async () => {
    const turns = new TenantTurns(1);
    const failing = turns.run("a", async () => {
      await tick();
      throw new Error("boom");
    });
    const next = turns.run("a", async () => "next");
    await expect(failing).rejects.toThrow("boom");
    expect(await next).toBe("next");
    expect(turns.busy).toBe(0);
  });

  test("with a limit of 2, two of one tenant's reads run at once and the third waits", async () => {
    const turns = new TenantTurns(2);
    const log: string[] = [];
    const [x, y, z] = ["x", "y", "z"].map((n) => gate(log, n));
    const results = [turns.run("a", x.work), turns.run("a", y.work), turns.run("a", z.work)];
    await tick();
    expect(log).toEqual(["start x", "start y"]);
    y.release();
    await tick();
    expect(log).toEqual(["start x", "start y", "end y", "start z"]);
    x.release();
    z.release();
    await Promise.all(results);
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
