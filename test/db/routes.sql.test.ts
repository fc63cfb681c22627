// The routes that find a tenant from what a request carries without one (docs/scaling.md): each is
// written in the transaction of its row, whoever writes it, keeps its hash unique across tenants,
// and a removed member's route goes with them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Db } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { newId } from "../../src/ids.ts";
import { hashSecret, newSecret, secretHint } from "../../src/keys/secret.ts";
import { openTestDb, uniqueEmail } from "../helpers/service.ts";
import { SQL_PASSWORD_HASH, sqlstate, testQuery } from "../helpers/sql.ts";

let db: Db;

beforeAll(async () => {
  db = await openTestDb();
  await migrate(db);
}, 60_000);
afterAll(async () => {
  await db?.close();
});

type Route = { kind: string; id: string; via: string };
/** In one order on both sides of a comparison, whatever the database's collation. */
const byId = (rs: Route[]) => [...rs].sort((a, b) => (a.kind + a.id < b.kind + b.id ? -1 : 1));
const routes = async (tenantId: string) => byId(await testQuery<Route>(db, "routes_of", [tenantId]));
const NOW = () => new Date().toISOString();

async function signup() {
  const secret = newSecret();
  const t = { tenantId: newId("cust_"), accountId: newId("acct_"), memberId: newId("mbr_"), keyId: newId("key_"), secretHash: await hashSecret(secret) };
  await db.query("accounts/signup", [t.tenantId, t.accountId, t.memberId, uniqueEmail("routes"), SQL_PASSWORD_HASH, t.keyId, t.secretHash, secretHint(secret)]);
  return t;
}

async function invite(t: { tenantId: string; memberId: string }, token: string) {
  const invitationId = newId("inv_");
  await db.query("members/invite", [invitationId, t.tenantId, t.memberId, uniqueEmail("routes-invited"), "viewer", token, "v1.sealed.token", {}, NOW()]);
  return invitationId;
}

test("keys, invitations and members are routed as they are made; a removed member no longer", async () => {
  const t = await signup();
  expect(await routes(t.tenantId)).toEqual(byId([
    { kind: "key", id: t.keyId, via: t.secretHash },
    { kind: "member", id: t.memberId, via: t.accountId },
  ]));
  const second = { keyId: newId("key_"), secretHash: await hashSecret(newSecret()) };
  await db.query("keys/create", [second.keyId, t.tenantId, "second", second.secretHash, "abcd", t.memberId, {}]);
  const token = newSecret();
  const invitationId = await invite(t, token);
  const joined = { accountId: newId("acct_"), memberId: newId("mbr_") };
  await db.query("members/invitation_accept", [token, null, joined.accountId, SQL_PASSWORD_HASH, joined.memberId, NOW()]);
  const invitationRoute = (await routes(t.tenantId)).find((r) => r.kind === "invitation")!;
  expect(invitationRoute.id).toBe(invitationId);
  expect(await routes(t.tenantId)).toEqual(byId([
    { kind: "key", id: t.keyId, via: t.secretHash },
    { kind: "key", id: second.keyId, via: second.secretHash },
    invitationRoute,
    { kind: "member", id: t.memberId, via: t.accountId },
    { kind: "member", id: joined.memberId, via: joined.accountId },
  ]));
  await db.query("members/remove", [t.tenantId, t.memberId, joined.memberId, NOW(), false]);
  expect((await routes(t.tenantId)).filter((r) => r.kind === "member")).toEqual([{ kind: "member", id: t.memberId, via: t.accountId }]);
  // The person has no tenant left to open a session of.
  expect(await db.query("accounts/member_for_session", [joined.accountId, null])).toEqual([]);
});

test("a secret hash or an invitation token is unique across tenants, through its route", async () => {
  const a = await signup();
  const b = await signup();
  expect(await sqlstate(db.query("keys/create", [newId("key_"), b.tenantId, "copy", a.secretHash, "abcd", b.memberId, {}]))).toBe("23505");
  const token = newSecret();
  await invite(a, token);
  expect(await sqlstate(invite(b, token))).toBe("23505");
  expect((await routes(b.tenantId)).map((r) => r.kind)).toEqual(["key", "member"]);
});
