// usage_read() (sql/schema/13_usage.sql), the read a decision on usage falls back to when the
// totals an instance knows keep proving stale: it takes the tenant's log head lock, so a second
// reader of the same tenant waits until the first transaction (which decides and appends) ends.
// The check that makes every decision exact is receipt_usage_rules() (test/db/append.sql.test.ts).
// PostgreSQL only: the embedded database has one session, where nothing runs concurrently.
import { describe, expect, test } from "bun:test";
import { openPostgres } from "../../src/db/postgres.ts";
import { testService } from "../helpers/service.ts";
import { sqlTenant, testSql, testTransaction } from "../helpers/sql.ts";

const DATABASE_URL = process.env.TEST_DATABASE_URL;

describe.skipIf(!DATABASE_URL)("usage_read()", () => {
  test("a second reader of the tenant's counters waits for the transaction of the first", async () => {
    const { db } = await testService();
    const t = await sqlTenant(db, "usage-lock");
    const order: string[] = [];
    let second: Promise<unknown> | undefined;
    await testTransaction(DATABASE_URL!, async (run) => {
      await run("usage_read_lock", [t.tenantId]);
      order.push("first read");
      const other = await openPostgres(DATABASE_URL!, { max: 1 });
      second = other
        .transaction((s) => s.run(testSql("usage_read_lock"), [t.tenantId]))
        .then(() => order.push("second read"))
        .finally(() => other.close());
      await Bun.sleep(300);
      order.push("first ends");
    });
    await second;
    expect(order).toEqual(["first read", "first ends", "second read"]);
  });
});

describe("usage counters", () => {
  test("only grow (WB001)", async () => {
    const { db } = await testService();
    const t = await sqlTenant(db, "usage-grow");
    await db.runScriptStatement("test/sql/usage_counter_set.sql", testSql("usage_counter_set"), [t.tenantId, 5]);
    const err = await db.runScriptStatement("test/sql/usage_counter_set.sql", testSql("usage_counter_set"), [t.tenantId, 4]).then(() => undefined, (e: { sqlstate?: string }) => e);
    expect(err?.sqlstate).toBe("WB001");
  });
});
