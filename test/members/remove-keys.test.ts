// A removed member's API keys (docs/api.md, DELETE /customer/members/{member_id}): the members list
// names the keys each member created that still work; a removal keeps them working and says so
// (kept_keys), or, with revoke_keys=true or the tenant's revoke_keys_on_member_removal, revokes
// them in the same step (revoked_keys): the next request with any of them gets 401 key_revoked, and
// the audit trail has a key.revoked event naming each, by the remover.
import { describe, expect, test } from "bun:test";
import { newId } from "../../src/ids.ts";
import { hashSecret, newSecret, secretHint } from "../../src/keys/secret.ts";
import { bearer, protect } from "../helpers/customer.ts";
import { addMember } from "../helpers/members.ts";
import { call, expectErrorShape, signup, type Reply } from "../helpers/service.ts";
import { testTransaction } from "../helpers/sql.ts";

const DATABASE_URL = process.env.TEST_DATABASE_URL;

const as = (token: string) => ({ headers: bearer(token) });

async function makeKey(token: string, label: string): Promise<{ key_id: string; secret: string }> {
  const made = await call("POST", "/customer/keys", { json: { label }, ...as(token) });
  expect(made.status).toBe(201);
  return { key_id: made.body.key_id, secret: made.body.secret };
}

async function auditOf(token: string, event: string) {
  const reply = await call("GET", `/customer/audit?event=${event}&limit=100`, as(token));
  expect(reply.status).toBe(200);
  return reply.body.events as { event: string; actor: { member_id?: string }; target: Record<string, unknown> }[];
}

describe("a removed member's keys", () => {
  test("the members list names the keys each member created; a plain removal leaves them working and lists them as kept", async () => {
    const boss = await signup();
    const dev = await addMember(boss.token, "developer");
    const key = await makeKey(dev.token, "dev's bot");
    const members = (await call("GET", "/customer/members", as(boss.token))).body.members as { member_id: string; keys: unknown[] }[];
    expect(members.find((m) => m.member_id === dev.memberId)!.keys).toEqual([
      { key_id: key.key_id, label: "dev's bot", hint: key.secret.slice(-4), created_at: expect.any(String) },
    ]);
    expect(members.find((m) => m.member_id === boss.memberId)!.keys).toEqual([expect.objectContaining({ label: expect.any(String) })]);

    const removed = await call("DELETE", `/customer/members/${dev.memberId}`, as(boss.token));
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ ok: true, member_id: dev.memberId, revoked_keys: [], kept_keys: [{ key_id: key.key_id, label: "dev's bot", hint: key.secret.slice(-4) }] });
    // Documented: the key keeps working until someone revokes it.
    expect((await protect(key.secret)).status).toBe(200);
    expect((await auditOf(boss.token, "member.removed"))[0].target).toEqual({ member_id: dev.memberId, role: "developer" });
  });

  test("revoke_keys=true revokes every key the member created, a rotation's overlap included, in the same step; the audit trail names each", async () => {
    const boss = await signup();
    const dev = await addMember(boss.token, "developer");
    const first = await makeKey(dev.token, "first");
    const second = await makeKey(dev.token, "second");
    // Rotated with an overlap: the old secret still works, the successor is the rotator's.
    const rotated = await call("POST", `/customer/keys/${first.key_id}/rotate`, { json: { overlap: 3600 }, ...as(dev.token) });
    expect(rotated.status).toBe(201);
    const successor = { key_id: rotated.body.key_id as string, secret: rotated.body.secret as string };
    for (const k of [first, second, successor]) expect((await protect(k.secret)).status).toBe(200);
    // Another member's key is not theirs to lose.
    const adminOfBoss = await addMember(boss.token, "admin");
    const others = await makeKey(adminOfBoss.token, "admin's");

    const removed = await call("DELETE", `/customer/members/${dev.memberId}?revoke_keys=true`, as(adminOfBoss.token));
    expect(removed.status).toBe(200);
    expect(removed.body.kept_keys).toEqual([]);
    expect(removed.body.revoked_keys.map((k: { key_id: string }) => k.key_id).sort()).toEqual([first.key_id, second.key_id, successor.key_id].sort());
    for (const k of [first, second, successor]) expectErrorShape(await protect(k.secret), 401, "key_revoked");
    expect((await protect(others.secret)).status).toBe(200);
    expect((await protect(boss.apiKey)).status).toBe(200);

    // One key.revoked per key, by the remover, naming the removed member; the removal lists them too.
    const revokedEvents = await auditOf(boss.token, "key.revoked");
    expect(revokedEvents.map((e) => e.target.key_id).sort()).toEqual([first.key_id, second.key_id, successor.key_id].sort());
    for (const e of revokedEvents) {
      expect(e.actor).toEqual({ member_id: adminOfBoss.memberId });
      expect(e.target.removed_member_id).toBe(dev.memberId);
    }
    const [removal] = await auditOf(boss.token, "member.removed");
    expect((removal.target.revoked_keys as string[]).sort()).toEqual([first.key_id, second.key_id, successor.key_id].sort());
    // The keys list says who revoked them.
    const listed = (await call("GET", "/customer/keys", as(boss.token))).body.keys as { key_id: string; status: string; revoked_by: string | null }[];
    expect(listed.find((k) => k.key_id === second.key_id)).toMatchObject({ status: "revoked", revoked_by: adminOfBoss.memberId });
    // And the members list no longer has the member, nor their keys.
    expect((await call("GET", "/customer/members", as(boss.token))).body.members.map((m: { member_id: string }) => m.member_id)).not.toContain(dev.memberId);
  });

  test("the tenant's revoke_keys_on_member_removal revokes them on every removal, also a member who leaves", async () => {
    const boss = await signup();
    const set = await call("PUT", "/customer/settings", { json: { revoke_keys_on_member_removal: true }, ...as(boss.token) });
    expect(set.body).toEqual({ ok: true, settings: { require_mfa: false, allow_self_approval: false, revoke_keys_on_member_removal: true } });
    expect((await auditOf(boss.token, "settings.changed"))[0].target).toEqual({ revoke_keys_on_member_removal: true });
    const dev = await addMember(boss.token, "developer");
    const key = await makeKey(dev.token, "leaver's");
    const left = await call("DELETE", `/customer/members/${dev.memberId}`, as(dev.token));
    expect(left.body).toEqual({ ok: true, member_id: dev.memberId, revoked_keys: [{ key_id: key.key_id, label: "leaver's", hint: key.secret.slice(-4) }], kept_keys: [] });
    expectErrorShape(await protect(key.secret), 401, "key_revoked");
    const [event] = await auditOf(boss.token, "key.revoked");
    expect(event).toMatchObject({ actor: { member_id: dev.memberId }, target: { key_id: key.key_id, removed_member_id: dev.memberId } });
  });

  test("revoke_keys takes a boolean; an unknown member is 404 and revokes nothing", async () => {
    const boss = await signup();
    const dev = await addMember(boss.token, "developer");
    const key = await makeKey(dev.token, "kept");
    expectErrorShape(await call("DELETE", `/customer/members/${dev.memberId}?revoke_keys=maybe`, as(boss.token)), 400, "invalid_request");
    expectErrorShape(await call("DELETE", `/customer/members/mbr_${"A".repeat(22)}?revoke_keys=true`, as(boss.token)), 404, "not_found");
    // A developer removes nobody else, and their refusal revokes nothing.
    const other = await addMember(boss.token, "developer");
    expectErrorShape(await call("DELETE", `/customer/members/${dev.memberId}?revoke_keys=true`, as(other.token)), 403, "forbidden_role");
    expect((await protect(key.secret)).status).toBe(200);
  });
});

// PostgreSQL only: the embedded database has one session, where nothing runs concurrently.
describe.skipIf(!DATABASE_URL)("a key made while its maker is removed", () => {
  test("the removal waits for the key's transaction, then revokes that key too", async () => {
    const boss = await signup();
    const dev = await addMember(boss.token, "developer");
    const secret = newSecret();
    const keyId = newId("key_");
    let removal: Promise<Reply> | undefined;
    await testTransaction(DATABASE_URL!, async (run) => {
      await run("key_create", [keyId, boss.tenantId, await hashSecret(secret), secretHint(secret), dev.memberId]);
      removal = call("DELETE", `/customer/members/${dev.memberId}?revoke_keys=true`, as(boss.token));
      // The removal is held on the maker's row until this transaction commits.
      await Bun.sleep(300);
    });
    const removed = await removal!;
    expect(removed.status).toBe(200);
    expect(removed.body.revoked_keys.map((k: { key_id: string }) => k.key_id)).toContain(keyId);
    expectErrorShape(await protect(secret), 401, "key_revoked");
  });

  test("a key asked for while the maker's removal is under way is refused once the removal commits: no key outlives it", async () => {
    const boss = await signup();
    const dev = await addMember(boss.token, "developer");
    let creation: Promise<Reply> | undefined;
    await testTransaction(DATABASE_URL!, async (run) => {
      await run("member_remove", [boss.tenantId, boss.memberId, dev.memberId, new Date().toISOString(), true]);
      // The session still reads the member (the removal has not committed); the key waits on the member's row.
      creation = call("POST", "/customer/keys", { json: { label: "late" }, ...as(dev.token) });
      await Bun.sleep(300);
    });
    // The session was the removed member's: 401, as its next request would get, and no key.
    expectErrorShape(await creation!, 401, "unauthorized");
    const keys = (await call("GET", "/customer/keys", as(boss.token))).body.keys as { label: string }[];
    expect(keys.map((k) => k.label)).not.toContain("late");
  });
});
