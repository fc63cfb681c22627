// The embedded database on its own thread (src/db/pglite.ts, src/db/pglite-thread.ts): PGlite's
// memory stays out of the service's heap, transactions keep other statements out as PGlite's own
// do, errors keep their SQLSTATE, and a closed database answers nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { DbError, openDb, type Db } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { testQuery } from "../helpers/sql.ts";

const embedded = !process.env.TEST_DATABASE_URL;
let db: Db;

beforeAll(async () => {
  if (!embedded) return;
  db = await openDb({ dataDir: "memory://" });
  await migrate(db);
});
afterAll(async () => {
  await db?.close();
});

describe.skipIf(!embedded)("the embedded database's thread", () => {
  test("PGlite's WebAssembly memory is not counted in this thread's heap", async () => {
    expect((await db.query("system/ping"))[0]).toEqual({ ok: 1 });
    // In this thread PGlite's 128 MB memory counts as ~268 MB of extra memory (performance.md).
    // The rest of the test process's buffers (the whole suite runs in it) count here too, and grew
    // past 64 MB with the suite: the bound is PGlite's memory alone, which this thread must not hold.
    expect(heapStats().extraMemorySize).toBeLessThan(128 * 1024 * 1024);
  });

  test("a transaction keeps every other statement out until it ends", async () => {
    const order: string[] = [];
    let begun!: () => void;
    const started = new Promise<void>((resolve) => (begun = resolve));
    const tx = db.tx(async (q) => {
      await q.query("system/ping");
      begun();
      await Bun.sleep(50);
      order.push("transaction");
    });
    await started;
    const outside = db.query("system/ping").then(() => order.push("outside"));
    await Promise.all([tx, outside]);
    expect(order).toEqual(["transaction", "outside"]);
  });

  test("a failed transaction is rolled back and its error keeps its SQLSTATE", async () => {
    const name = `thread_${Date.now()}`;
    const failed = await db
      .tx(async (q) => {
        await q.query("system/secret_create", [name, "value"]);
        // An invalid date in a product query: 22007 from PostgreSQL itself.
        await q.query("receipts/usage_summary", ["cust_" + "0".repeat(22), "not a time"]);
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(failed).toBeInstanceOf(DbError);
    expect((failed as DbError).sqlstate).toBe("22007");
    expect(await db.query("system/secret_get", [name])).toEqual([]);
  });

  test("a notice is heard before the answer of the statement whose commit sent it", async () => {
    const heard: string[] = [];
    await db.listen!("thread_test", (payload) => heard.push(payload));
    for (let i = 0; i < 5; i++) {
      await testQuery(db, "notify", ["thread_test", String(i)]);
      expect(heard).toEqual(Array.from({ length: i + 1 }, (_, j) => String(j)));
    }
  });

  test("a closed database answers every call with an error", async () => {
    const other = await openDb({ dataDir: "memory://" });
    expect((await other.query("system/ping"))[0]).toEqual({ ok: 1 });
    await other.close();
    await expect(other.query("system/ping")).rejects.toThrow("closed");
  });
});
