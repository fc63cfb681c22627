// /customer/entities through HTTP, as a client uses it: entities written in batches (all or
// none), read, listed by type with a cursor, deleted; every bad input a 400 with its JSON path;
// the plan's entities limit (429), the custom_policy gate, roles, other tenants (404), the audit
// trail's events; and EntityLookup, which decisions read them through, fresh on every instance.
import { afterAll, describe, expect, test } from "bun:test";
import { bearer, setPlan } from "../helpers/customer.ts";
import { addMember } from "../helpers/members.ts";
import { call, expectErrorShape, secondInstance, signup, testService } from "../helpers/service.ts";
import { sqlstate, testOne } from "../helpers/sql.ts";
import { EntityLookup } from "../../src/entities/lookup.ts";
import type { Db } from "../../src/db/index.ts";

type Row = Record<string, any>;

async function proUser() {
  const user = await signup();
  await setPlan(user.tenantId, "pro");
  return user;
}

const put = (token: string, entities: unknown[]) => call("PUT", "/customer/entities", { json: { entities }, headers: bearer(token) });
const get = (token: string, type: string, id: string) =>
  call("GET", `/customer/entities/${encodeURIComponent(type)}/${encodeURIComponent(id)}`, { headers: bearer(token) });
const del = (token: string, type: string, id: string) =>
  call("DELETE", `/customer/entities/${encodeURIComponent(type)}/${encodeURIComponent(id)}`, { headers: bearer(token) });
const list = (token: string, query = "") => call("GET", `/customer/entities${query}`, { headers: bearer(token) });

const ALICE = { type: "user", id: "alice", attributes: { department: "finance", level: 3, admin: false, teams: ["a", "b"] } };
const INVOICE = { type: "invoice", id: "inv/42", attributes: { owner: "alice", amount: 1200.5 }, parents: [{ type: "account", id: "acme" }] };

describe("writing and reading", () => {
  test("PUT upserts a batch and answers the tenant's version; GET shows each entity; a change moves its version; DELETE removes it", async () => {
    const user = await proUser();
    const first = await put(user.token, [ALICE, INVOICE]);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ ok: true, upserted: 2, version: 1 });

    const alice = await get(user.token, "user", "alice");
    expect(alice.status).toBe(200);
    expect(alice.body.entity).toMatchObject({ ...ALICE, parents: [], version: 1, updated_by: user.memberId });
    expect(alice.body.entity.updated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // An id with a slash, sent encoded in the path.
    expect((await get(user.token, "invoice", "inv/42")).body.entity).toMatchObject({ ...INVOICE, version: 1 });

    const changed = await put(user.token, [{ ...ALICE, attributes: { department: "legal" } }]);
    expect(changed.body).toEqual({ ok: true, upserted: 1, version: 2 });
    expect((await get(user.token, "user", "alice")).body.entity).toMatchObject({ attributes: { department: "legal" }, version: 2 });
    expect((await get(user.token, "invoice", "inv/42")).body.entity.version).toBe(1);

    const gone = await del(user.token, "user", "alice");
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual({ ok: true, version: 3 });
    expectErrorShape(await get(user.token, "user", "alice"), 404, "not_found");
    expectErrorShape(await del(user.token, "user", "alice"), 404, "not_found");
    expectErrorShape(await del(user.token, "user", "nobody"), 404, "not_found");
  });

  test("GET lists in (type, id) order, a page at a time, of one type when asked; a cursor not ours is a 400", async () => {
    const user = await proUser();
    const entities = [
      ...["u1", "u2", "u3"].map((id) => ({ type: "user", id, attributes: {} })),
      ...["d1", "d2"].map((id) => ({ type: "doc", id, attributes: { n: 1 } })),
    ];
    expect((await put(user.token, entities)).status).toBe(200);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Row = await list(user.token, `?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      expect(page.body.entities.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.entities.map((e: Row) => `${e.type}/${e.id}`));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(["doc/d1", "doc/d2", "user/u1", "user/u2", "user/u3"]);

    const users = await list(user.token, "?type=user");
    expect(users.body.entities.map((e: Row) => e.id)).toEqual(["u1", "u2", "u3"]);
    expect(users.body.next_cursor).toBeNull();
    expectErrorShape(await list(user.token, "?cursor=nonsense"), 400, "invalid_request");
    expectErrorShape(await list(user.token, "?limit=101"), 400, "invalid_request");
    expectErrorShape(await list(user.token, "?colour=red"), 400, "invalid_request");
  });
});

describe("bad input: a clear 400 naming the path, and nothing of the batch written", () => {
  const big = "x".repeat(16 * 1024);
  const cases: [string, unknown[], RegExp][] = [
    ["an entity over 16 KiB of JSON", [ALICE, { type: "t", id: "big", attributes: { blob: big } }], /^body\/entities\/1: this entity is \d+ bytes/],
    ["a nested object as a value", [ALICE, ALICE, ALICE, { type: "t", id: "n", attributes: { x: { a: 1 } } }].map((e, i) => ({ ...(e as Row), id: `e${i}` })), /^body\/entities\/3\/attributes\/x/],
    ["a null value", [{ type: "t", id: "n", attributes: { x: null } }], /^body\/entities\/0\/attributes\/x/],
    ["a list of objects", [{ type: "t", id: "n", attributes: { x: [{ a: 1 }] } }], /^body\/entities\/0\/attributes\/x/],
    ["a list of lists", [{ type: "t", id: "n", attributes: { x: [[1]] } }], /^body\/entities\/0\/attributes\/x/],
    ["more than 100 list items", [{ type: "t", id: "n", attributes: { x: Array.from({ length: 101 }, (_, i) => i) } }], /^body\/entities\/0\/attributes\/x/],
    ["more than 64 attributes", [{ type: "t", id: "n", attributes: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`a${i}`, i])) }], /^body\/entities\/0\/attributes/],
    ["an attribute name that is not an identifier", [{ type: "t", id: "n", attributes: { "has space": 1 } }], /^body\/entities\/0\/attributes/],
    ["an empty type", [{ type: "", id: "n", attributes: {} }], /^body\/entities\/0\/type/],
    ["a type of 129 characters", [{ type: "t".repeat(129), id: "n", attributes: {} }], /^body\/entities\/0\/type/],
    ["an id that is a number", [{ type: "t", id: 7, attributes: {} }], /^body\/entities\/0\/id/],
    ["no attributes", [{ type: "t", id: "n" }], /^body\/entities\/0\/attributes/],
    ["an unknown field", [{ type: "t", id: "n", attributes: {}, colour: "red" }], /^body\/entities\/0/],
    ["a parent without an id", [{ type: "t", id: "n", attributes: {}, parents: [{ type: "p" }] }], /^body\/entities\/0\/parents\/0/],
    ["two entries naming one entity", [ALICE, INVOICE, ALICE], /^body\/entities\/2: names the same entity as body\/entities\/0/],
    ["more than 1,000 entities", Array.from({ length: 1001 }, (_, i) => ({ type: "t", id: `${i}`, attributes: {} })), /^body\/entities/],
  ];
  for (const [what, entities, message] of cases) {
    test(what, async () => {
      const user = await proUser();
      const reply = await put(user.token, entities);
      expectErrorShape(reply, 400, "invalid_request");
      expect(reply.body.message).toMatch(message);
      expect((await list(user.token)).body.entities).toEqual([]);
    });
  }

  test("an entity of exactly 16 KiB of JSON is written, one byte more is not (the service and the database measure alike)", async () => {
    const user = await proUser();
    const shell = { type: "t", id: "edge", attributes: { blob: "" } };
    const room = 16 * 1024 - Buffer.byteLength(JSON.stringify(shell));
    // Multi-byte characters count by their UTF-8 bytes.
    const exact = { ...shell, attributes: { blob: "é".repeat(room / 2) + "x".repeat(room % 2) } };
    expect(Buffer.byteLength(JSON.stringify(exact))).toBe(16 * 1024);
    expect((await put(user.token, [exact])).status).toBe(200);
    const over = { ...shell, attributes: { blob: exact.attributes.blob + "x" } };
    expect((await put(user.token, [over])).body.message).toMatch(/^body\/entities\/0: this entity is 16385 bytes/);
  });

  test("not JSON, not an object, no entities: 400; nothing stored", async () => {
    const user = await proUser();
    expectErrorShape(await call("PUT", "/customer/entities", { body: "{", headers: { ...bearer(user.token), "content-type": "application/json" } }), 400, "invalid_json");
    expectErrorShape(await call("PUT", "/customer/entities", { json: [], headers: bearer(user.token) }), 400, "invalid_request");
    expectErrorShape(await call("PUT", "/customer/entities", { json: {}, headers: bearer(user.token) }), 400, "invalid_request");
  });

  test("the database refuses an invalid entity written past the service (WE001)", async () => {
    const user = await proUser();
    expect((await put(user.token, [ALICE])).status).toBe(200);
    const { db } = await testService();
    expect(await sqlstate(testOne(db, "entity_insert_raw", [user.tenantId, "t", "n", JSON.stringify({ x: { a: 1 } }), "[]"]))).toBe("WE001");
    expect(await sqlstate(testOne(db, "entity_insert_raw", [user.tenantId, "t", "n", JSON.stringify({ "not a name": 1 }), "[]"]))).toBe("WE001");
    expect(await sqlstate(testOne(db, "entity_insert_raw", [user.tenantId, "", "n", "{}", "[]"]))).toBe("WE001");
    expect(await sqlstate(testOne(db, "entity_insert_raw", [user.tenantId, "t", "n", "{}", JSON.stringify([{ type: "p" }])]))).toBe("WE001");
  });
});

describe("plans, roles and tenants", () => {

  test("past the plan's entities limit: 429 quota_exceeded, limit entities, and nothing of the batch is written; changes of stored ones still go", async () => {
    const { db } = await testService();
    const user = await proUser();
    await testOne(db, "plan_entities_set", ["pro", 3]);
    try {
      expect((await put(user.token, [ALICE, INVOICE])).status).toBe(200);
      const over = await put(user.token, [{ type: "user", id: "bob", attributes: {} }, { type: "user", id: "carol", attributes: {} }]);
      expectErrorShape(over, 429, "quota_exceeded");
      expect(over.body.limit).toBe("entities");
      expect((await list(user.token)).body.entities.map((e: Row) => e.id).sort()).toEqual(["alice", "inv/42"]);
      // The two stored ones changed and one more: three, the limit.
      expect((await put(user.token, [ALICE, INVOICE, { type: "user", id: "bob", attributes: {} }])).status).toBe(200);
      // A delete makes room again.
      expect((await del(user.token, "user", "bob")).status).toBe(200);
      expect((await put(user.token, [{ type: "user", id: "carol", attributes: {} }])).status).toBe(200);
    } finally {
      await testOne(db, "plan_entities_set", ["pro", 10000]);
    }
  });

  test("writes need custom_policy (403 plan_required on free); reads work on every plan", async () => {
    const user = await signup();
    const refused = await put(user.token, [ALICE]);
    expectErrorShape(refused, 403, "plan_required");
    expect(refused.body.required_plan).toBe("pro");
    expectErrorShape(await del(user.token, "user", "alice"), 403, "plan_required");
    expect((await list(user.token)).body).toEqual({ ok: true, entities: [], next_cursor: null });
  });

  test("admins write; developers and viewers read only (403 forbidden_role, required_role admin)", async () => {
    const owner = await proUser();
    expect((await put(owner.token, [ALICE])).status).toBe(200);
    const admin = await addMember(owner.token, "admin");
    const developer = await addMember(owner.token, "developer");
    const viewer = await addMember(owner.token, "viewer");
    expect((await put(admin.token, [INVOICE])).status).toBe(200);
    for (const member of [developer, viewer]) {
      const refused = await put(member.token, [{ type: "user", id: "x", attributes: {} }]);
      expectErrorShape(refused, 403, "forbidden_role");
      expect(refused.body.required_role).toBe("admin");
      expectErrorShape(await del(member.token, "user", "alice"), 403, "forbidden_role");
      expect((await get(member.token, "user", "alice")).status).toBe(200);
      expect((await list(member.token)).body.entities).toHaveLength(2);
    }
  });

  test("without a session: 401 before the body is read", async () => {
    expectErrorShape(await call("PUT", "/customer/entities", { json: { entities: "nonsense" } }), 401, "unauthorized");
    expectErrorShape(await call("GET", "/customer/entities"), 401, "unauthorized");
    expectErrorShape(await call("GET", "/customer/entities/user/alice"), 401, "unauthorized");
    expectErrorShape(await call("DELETE", "/customer/entities/user/alice"), 401, "unauthorized");
  });

  test("another tenant's entities are never seen: 404 to read or delete, absent from the list", async () => {
    const a = await proUser();
    const b = await proUser();
    expect((await put(a.token, [ALICE])).status).toBe(200);
    expectErrorShape(await get(b.token, "user", "alice"), 404, "not_found");
    expectErrorShape(await del(b.token, "user", "alice"), 404, "not_found");
    expect((await list(b.token)).body.entities).toEqual([]);
    // b's own entity by the same name is b's; a's stays as it was.
    expect((await put(b.token, [{ ...ALICE, attributes: { department: "b" } }])).body).toEqual({ ok: true, upserted: 1, version: 1 });
    expect((await get(a.token, "user", "alice")).body.entity.attributes).toEqual(ALICE.attributes);
    const { service } = await testService();
    expect(await service.deps.entities.find(b.tenantId, { subject: { type: "user", id: "alice" } })).toMatchObject({ subject: { attributes: { department: "b" } } });
  });

  test("each write is an event of the audit trail: entities.upserted with counts, entities.deleted naming the entity", async () => {
    const user = await proUser();
    await put(user.token, [ALICE, INVOICE]);
    await del(user.token, "invoice", "inv/42");
    const events = (await call("GET", "/customer/audit?event=entities.*", { headers: bearer(user.token) })).body.events as Row[];
    expect(events.map((e) => [e.event, e.actor, e.target])).toEqual([
      ["entities.deleted", { member_id: user.memberId }, { type: "invoice", id: "inv/42", version: 2, stored: 1 }],
      ["entities.upserted", { member_id: user.memberId }, { upserted: 2, version: 1, stored: 2 }],
    ]);
  });
});

describe("EntityLookup: what decisions read", () => {
  const instances: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const i of instances) await i.close();
  });

  test("finds the subject and the resource by type and id; one the tenant lacks is null", async () => {
    const user = await proUser();
    await put(user.token, [ALICE, INVOICE]);
    const { service } = await testService();
    const found = await service.deps.entities.find(user.tenantId, { subject: { type: "user", id: "alice" }, resource: { type: "invoice", id: "nope" } });
    expect(found).toEqual({ subject: { type: "user", id: "alice", attributes: ALICE.attributes, parents: [], version: 1 }, resource: null });
    expect(await service.deps.entities.find(user.tenantId, {})).toEqual({});
  });

  test("a lookup held is reused while the tenant's epoch stands (one small query: the epoch), read again once a write moved it", async () => {
    const user = await proUser();
    await put(user.token, [ALICE]);
    const { db } = await testService();
    const asked: string[] = [];
    // Without listening (as on PostgreSQL): freshness by the key context epoch, on either database.
    const counting = { ...db, query: (name: string, params: unknown[]) => (asked.push(name), db.query(name as any, params as any)) } as unknown as Db;
    const lookup = new EntityLookup(counting);
    const ref = { subject: { type: "user", id: "alice" } };
    expect((await lookup.find(user.tenantId, ref)).subject?.version).toBe(1);
    expect((await lookup.find(user.tenantId, ref)).subject?.version).toBe(1);
    expect(asked).toEqual(["entities/lookup", "keys/epochs"]);
    await put(user.token, [{ ...ALICE, attributes: { department: "legal" } }]);
    expect((await lookup.find(user.tenantId, ref)).subject).toMatchObject({ attributes: { department: "legal" }, version: 2 });
    expect(asked).toEqual(["entities/lookup", "keys/epochs", "keys/epochs", "entities/lookup"]);
  });

  test("with the epoch an API key's check read, a kept lookup costs no query; a write moves that epoch, and the next is read again", async () => {
    const user = await proUser();
    await put(user.token, [ALICE]);
    const { db, service } = await testService();
    const asked: string[] = [];
    const counting = { ...db, query: (name: string, params: unknown[]) => (asked.push(name), db.query(name as any, params as any)) } as unknown as Db;
    const lookup = new EntityLookup(counting);
    const ref = { subject: { type: "user", id: "alice" } };
    const epochOf = async () => (await service.deps.keys.authenticate(user.apiKey)).context_epoch;
    const before = await epochOf();
    expect((await lookup.find(user.tenantId, ref, before)).subject?.version).toBe(1);
    expect((await lookup.find(user.tenantId, ref, before)).subject?.version).toBe(1);
    expect(asked).toEqual(["entities/lookup"]);
    await put(user.token, [{ ...ALICE, attributes: { department: "legal" } }]);
    const after = await epochOf();
    expect(after).toBeGreaterThan(before);
    expect((await lookup.find(user.tenantId, ref, after)).subject).toMatchObject({ attributes: { department: "legal" }, version: 2 });
    expect(asked).toEqual(["entities/lookup", "entities/lookup"]);
  });

  test("a write on one instance is seen by the next lookup on another (cached there before the write)", async () => {
    const user = await proUser();
    await put(user.token, [ALICE]);
    const { service: one } = await testService();
    const two = await secondInstance();
    instances.push(two);
    const ref = { subject: { type: "user", id: "alice" }, resource: { type: "invoice", id: "inv/42" } };
    // Read (and cached) on the first instance.
    expect((await one.deps.entities.find(user.tenantId, ref)).subject?.attributes).toEqual(ALICE.attributes);
    expect((await one.deps.entities.find(user.tenantId, ref)).resource).toBeNull();

    // Written through the second.
    const changed = await call("PUT", "/customer/entities", { json: { entities: [{ ...ALICE, attributes: { department: "legal" } }, INVOICE] }, headers: bearer(user.token), service: two.service });
    expect(changed.status).toBe(200);
    const after = await one.deps.entities.find(user.tenantId, ref);
    expect(after.subject).toMatchObject({ attributes: { department: "legal" }, version: 2 });
    expect(after.resource).toMatchObject({ attributes: INVOICE.attributes, version: 2 });

    // A delete too.
    expect((await call("DELETE", "/customer/entities/user/alice", { headers: bearer(user.token), service: two.service })).status).toBe(200);
    expect((await one.deps.entities.find(user.tenantId, ref)).subject).toBeNull();
  });
});
