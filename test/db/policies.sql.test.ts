// The database rules of policies, called as the app calls them: the cap on stored versions (WP002)
// holds for policy_publish() and for any other writer, a publish names the suite it ran (WP003),
// and the stored suite is a JSON array.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DbError, type Db } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { canonicalJson, sha256Hex } from "../../src/crypto/canonical.ts";
import { openTestDb } from "../helpers/service.ts";
import { sqlTenant, testQuery } from "../helpers/sql.ts";

let db: Db;

beforeAll(async () => {
  db = await openTestDb();
  await migrate(db);
}, 60_000);
afterAll(async () => {
  await db?.close();
});

async function tenant(): Promise<string> {
  return (await sqlTenant(db, "policies-sql")).tenantId;
}

async function sqlstate(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(DbError);
  return (err as DbError).sqlstate;
}

describe("the cap on stored policy versions", () => {
  test("policy_versions_cap() versions per tenant, whoever writes them; other tenants unaffected", async () => {
    const [t, other] = await Promise.all([tenant(), tenant()]);
    const [builtIn] = await db.query("policies/versions", [t, null, 1]);
    expect(builtIn.version).toBe(1);
    // A writer that skips publish and numbers a version beyond the cap is refused too.
    expect(await sqlstate(testQuery(db, "policy_fill", [t, 1002]))).toBe("WP002");
    expect(await testQuery(db, "policy_fill", [t, 1001])).toHaveLength(1000);
    const doc = canonicalJson({ default_effect: "deny", default_reason: "one_more", rules: [] });
    const hash = await sha256Hex(doc);
    expect(await sqlstate(db.query("policies/publish", [t, doc, hash, null, null]))).toBe("WP002");
    expect((await db.query("policies/active", [t]))[0].version).toBe(1001);
    expect((await db.query("policies/publish", [other, doc, hash, null, null]))[0].version).toBe(2);
  });
});

describe("the stored suite", () => {
  test("is replaced as a whole and must be a JSON array", async () => {
    const t = await tenant();
    expect(await db.query("policies/tests_get", [t])).toEqual([]);
    await db.query("policies/tests_put", [t, "[1]"]);
    expect((await db.query("policies/tests_put", [t, "[]"]))[0].cases).toBe("[]");
    expect(await sqlstate(db.query("policies/tests_put", [t, '{"cases":[]}']))).toBe("23514");
  });
});

describe("a publish names the stored suite its tests ran against", () => {
  test("the suite as stored (NULL: none) publishes; any other is WP003 and nothing is stored", async () => {
    const t = await tenant();
    const doc = canonicalJson({ default_effect: "deny", default_reason: "suite", rules: [] });
    const hash = await sha256Hex(doc);
    // None stored: only NULL matches, not an empty array.
    expect(await sqlstate(db.query("policies/publish", [t, doc, hash, "[]", null]))).toBe("WP003");
    expect((await db.query("policies/publish", [t, doc, hash, null, null]))[0].version).toBe(2);
    const old = (await db.query("policies/tests_put", [t, '[{"name":"old"}]']))[0].cases;
    const current = (await db.query("policies/tests_put", [t, '[{"name":"new"}]']))[0].cases;
    for (const stale of [null, old, current + " "]) expect(await sqlstate(db.query("policies/publish", [t, doc, hash, stale, null]))).toBe("WP003");
    expect((await db.query("policies/active", [t]))[0].version).toBe(2);
    expect((await db.query("policies/publish", [t, doc, hash, current, null]))[0].version).toBe(3);
  });
});
