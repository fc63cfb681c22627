// The database rules of entities, called as the app calls them: a batch is written whole or not at
// all (WE001 for any entity entity_problem() refuses, one over 16,384 bytes, an unknown field, a
// name given twice, more than 1,000), the plan's entities limit holds exactly under concurrent
// writers (WE002), a delete of nothing is WE003, and each write moves the tenant's head version.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Db } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { openTestDb } from "../helpers/service.ts";
import { sqlTenant, sqlstate, testOne } from "../helpers/sql.ts";

let db: Db;

beforeAll(async () => {
  db = await openTestDb();
  await migrate(db);
}, 60_000);
afterAll(async () => {
  await db?.close();
});

const tenant = async () => (await sqlTenant(db, "entities-sql")).tenantId;
const entity = (id: string, attributes: Record<string, unknown> = {}) => ({ type: "user", id, attributes });
const upsert = (t: string, entities: unknown) => db.one("entities/upsert", [t, null, entities]);
const head = async (t: string) => (await db.query("entities/heads", [[t]]))[0]?.version ?? 0;

describe("entities_upsert()", () => {
  test("writes a batch and moves the head; a rewrite keeps the count and moves each entity's version", async () => {
    const t = await tenant();
    expect(await head(t)).toBe(0);
    expect(await upsert(t, [entity("a"), entity("b")])).toEqual({ upserted: 2, version: 1, stored: 2 });
    expect(await upsert(t, [entity("a", { x: 1 }), entity("c")])).toEqual({ upserted: 2, version: 2, stored: 3 });
    expect(await head(t)).toBe(2);
    expect(await db.one("entities/get", [t, "user", "a"])).toMatchObject({ attributes: { x: 1 }, parents: [], version: 2, updated_by: null });
    expect((await db.one("entities/get", [t, "user", "b"]))!.version).toBe(1);
  });

  const refused: [string, unknown][] = [
    ["a nested object", [entity("a"), entity("b", { x: { y: 1 } })]],
    ["null", [entity("b", { x: null })]],
    ["a list of lists", [entity("b", { x: [[1]] })]],
    ["101 list items", [entity("b", { x: Array.from({ length: 101 }, () => 1) })]],
    ["65 attributes", [entity("b", Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`a${i}`, i])))]],
    ["a name that is not an identifier", [entity("b", { "a b": 1 })]],
    ["an empty id", [entity("")]],
    ["a type of 129 characters", [{ type: "t".repeat(129), id: "a", attributes: {} }]],
    ["an id that is a number", [{ type: "t", id: 1, attributes: {} }]],
    ["an unknown field", [{ ...entity("a"), colour: "red" }]],
    ["a parent without its id", [{ ...entity("a"), parents: [{ type: "org" }] }]],
    ["16,385 bytes", [entity("a", { blob: "x".repeat(16_385 - JSON.stringify(entity("a", { blob: "" })).length) })]],
    ["one entity named twice", [entity("a"), entity("b"), entity("a")]],
    ["1,001 entities", Array.from({ length: 1001 }, (_, i) => entity(`${i}`))],
    ["an object, not a list", { entities: [] }],
  ];
  for (const [what, batch] of refused) {
    test(`refuses ${what} (WE001), writing nothing`, async () => {
      const t = await tenant();
      expect(await sqlstate(upsert(t, batch))).toBe("WE001");
      expect(await head(t)).toBe(0);
      expect(await db.query("entities/list", [t, null, null, null, 10])).toEqual([]);
    });
  }

  test("16,384 bytes of JSON is written", async () => {
    const t = await tenant();
    const shell = JSON.stringify(entity("a", { blob: "" })).length;
    expect((await upsert(t, [entity("a", { blob: "x".repeat(16_384 - shell) })]))!.upserted).toBe(1);
  });

  test("the plan's limit holds exactly when writers race, on the head row's lock (WE002 for the rest)", async () => {
    const t = await tenant();
    await testOne(db, "plan_entities_set", ["free", 5]);
    try {
      expect((await upsert(t, [entity("0")]))!.stored).toBe(1);
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, i) => upsert(t, [entity(`w${i}a`), entity(`w${i}b`)]).then(() => "ok", (e) => (e as { sqlstate?: string }).sqlstate)),
      );
      expect(outcomes.filter((o) => o === "ok")).toHaveLength(2);
      expect(outcomes.filter((o) => o !== "ok").every((o) => o === "WE002")).toBe(true);
      expect(await db.query("entities/list", [t, null, null, null, 100])).toHaveLength(5);
    } finally {
      await testOne(db, "plan_entities_set", ["free", 1000]);
    }
  });
});

describe("entity_delete() and the guard", () => {
  test("a delete moves the head and the count; deleting nothing is WE003 and moves nothing", async () => {
    const t = await tenant();
    expect(await sqlstate(db.one("entities/delete", [t, null, "user", "a"]))).toBe("WE003");
    await upsert(t, [entity("a"), entity("b")]);
    expect(await db.one("entities/delete", [t, null, "user", "a"])).toEqual({ version: 2, stored: 1 });
    expect(await sqlstate(db.one("entities/delete", [t, null, "user", "a"]))).toBe("WE003");
    expect(await head(t)).toBe(2);
  });

  test("another tenant's entity is not found, nor deleted", async () => {
    const [a, b] = await Promise.all([tenant(), tenant()]);
    await upsert(a, [entity("x")]);
    await upsert(b, [entity("y")]);
    expect(await db.one("entities/get", [b, "user", "x"])).toBeUndefined();
    expect(await sqlstate(db.one("entities/delete", [b, null, "user", "x"]))).toBe("WE003");
    expect(await db.one("entities/get", [a, "user", "x"])).toBeDefined();
  });

  test("a write past the procedures is held to the same rules (entities_guard)", async () => {
    const t = await tenant();
    await upsert(t, [entity("a")]);
    expect(await sqlstate(testOne(db, "entity_insert_raw", [t, "t", "n", JSON.stringify({ x: [{}] }), "[]"]))).toBe("WE001");
    expect(await sqlstate(testOne(db, "entity_insert_raw", [t, "t", "n", JSON.stringify([1]), "[]"]))).toBe("WE001");
  });
});
