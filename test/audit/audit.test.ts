// The audit trail through HTTP, as a client reads it: each change of who may do what appears in
// GET /customer/audit with its actor and target, as a signed receipt of kind "event" of the
// tenant's log (verifiable offline like any receipt); operators' changes appear with actor
// {operator}; events count toward no quota; pages and filters; other tenants see none of it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "otplib";
import type { Service } from "../../src/app/service.ts";
import { createService } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { runOpsScript } from "../../src/ops/scripts.ts";
import { checkReceiptLog } from "../../src/receipts/check.ts";
import { verifyProofBundle } from "../../src/receipts/proof-bundle.ts";
import { bearer, signupWithMail } from "../helpers/accounts.ts";
import { runCli } from "../helpers/cli.ts";
import { apiKey, pool, protect, setPlan } from "../helpers/customer.ts";
import { closeMailFixture, linkToken, openMailFixture, type Inbox } from "../helpers/mail.ts";
import { call, expectErrorShape, GOOD_PASSWORD, subjectOf, testConfig, testService, uniqueEmail } from "../helpers/service.ts";
import { testOne } from "../helpers/sql.ts";

let inbox: Inbox;
let service: Service;
let dir: string;
beforeAll(async () => {
  ({ inbox, service } = await openMailFixture());
  dir = mkdtempSync(join(tmpdir(), "warden-audit-"));
});
afterAll(async () => {
  await closeMailFixture({ inbox, service });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const as = (token: string) => ({ headers: bearer(token), service });

/**
 * The owner of a new tenant, with their member id, and `signup`: the event its log starts with,
 * the creation of its first key (as trail() lists it).
 */
async function owner(tag = "owner") {
  const user = await signupWithMail(service, inbox, GOOD_PASSWORD, tag);
  const memberId = subjectOf(user.token).member_id;
  const [first] = (await call("GET", "/customer/keys", as(user.token))).body.keys;
  const signup = ["key.created", { member_id: memberId }, { key_id: first.key_id, label: "default" }];
  return { ...user, memberId, firstKeyId: first.key_id as string, signup };
}

/** Invites `email` as `role`; the emailed link's token and the invitation's id. */
async function invited(by: string, email: string, role: string): Promise<{ token: string; invitationId: string }> {
  const before = inbox.to(email).length;
  const reply = await call("POST", "/customer/members/invitations", { json: { email, role }, ...as(by) });
  expect(reply.status).toBe(201);
  const messages = await inbox.waitFor(email, before + 1);
  return { token: linkToken(messages[before], "/console/invitation"), invitationId: reply.body.invitation_id };
}

/** A new person who joined `by`'s tenant as `role`. */
async function joined(by: string, role: string) {
  const { token, invitationId } = await invited(by, uniqueEmail(role), role);
  const reply = await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD }, service });
  expect(reply.status).toBe(200);
  return { token: reply.body.token as string, memberId: reply.body.member_id as string, invitationId };
}

type Entry = { receipt_id: string; seq: number; event: string; actor: Record<string, string>; target: Record<string, unknown>; at: string; receipt: Record<string, any> };

async function audit(token: string, query = ""): Promise<Entry[]> {
  const reply = await call("GET", `/customer/audit${query}`, as(token));
  expect(reply.status).toBe(200);
  return reply.body.events;
}

/** The tenant's events as [event, actor, target], oldest first. */
async function trail(token: string) {
  return (await audit(token, "?limit=100")).reverse().map((e) => [e.event, e.actor, e.target]);
}

/** Operators' queued events, signed and appended now (every worker has finished with them). */
async function operatorEventsAppended(): Promise<void> {
  const { db } = await testService();
  for (;;) {
    await service.deps.auditOutbox.drain();
    if ((await db.one("audit/outbox_pending"))!.pending === 0) return;
    await Bun.sleep(20); // another service's worker holds them: its transaction is about to commit
  }
}

describe("each change is in the audit trail, with who made it and what it was made to", () => {
  test("members: invited, joined, role changed (not when unchanged), invitation revoked, removed, left", async () => {
    const boss = await owner();
    const dev = await joined(boss.token, "developer");
    const role = await call("PATCH", `/customer/members/${dev.memberId}`, { json: { role: "admin" }, ...as(boss.token) });
    expect(role.status).toBe(200);
    expect((await call("PATCH", `/customer/members/${dev.memberId}`, { json: { role: "admin" }, ...as(boss.token) })).status).toBe(200);
    const other = await invited(boss.token, uniqueEmail("later"), "viewer");
    expect((await call("POST", `/customer/members/invitations/${other.invitationId}/revoke`, as(boss.token))).status).toBe(200);
    const viewer = await joined(boss.token, "viewer");
    expect((await call("DELETE", `/customer/members/${dev.memberId}`, as(boss.token))).status).toBe(200);
    expect((await call("DELETE", `/customer/members/${viewer.memberId}`, as(viewer.token))).status).toBe(200);

    const by = { member_id: boss.memberId };
    expect(await trail(boss.token)).toEqual([
      boss.signup,
      ["member.invited", by, { invitation_id: dev.invitationId, role: "developer" }],
      ["member.joined", { member_id: dev.memberId }, { member_id: dev.memberId, role: "developer", invitation_id: dev.invitationId }],
      ["member.role_changed", by, { member_id: dev.memberId, role: "admin", previous_role: "developer" }],
      ["member.invited", by, { invitation_id: other.invitationId, role: "viewer" }],
      ["member.invitation_revoked", by, { invitation_id: other.invitationId, role: "viewer" }],
      ["member.invited", by, { invitation_id: viewer.invitationId, role: "viewer" }],
      ["member.joined", { member_id: viewer.memberId }, { member_id: viewer.memberId, role: "viewer", invitation_id: viewer.invitationId }],
      ["member.removed", by, { member_id: dev.memberId, role: "admin" }],
      ["member.removed", { member_id: viewer.memberId }, { member_id: viewer.memberId, role: "viewer" }],
    ]);
    // No email in the log: it keeps what it holds forever.
    expect(JSON.stringify(await audit(boss.token))).not.toContain("@");
  });

  test("keys: created, rotated, revoked", async () => {
    const boss = await owner();
    const created = (await call("POST", "/customer/keys", { json: { label: "ci" }, ...as(boss.token) })).body;
    const rotated = (await call("POST", `/customer/keys/${created.key_id}/rotate`, as(boss.token))).body;
    expect((await call("POST", `/customer/keys/${rotated.key_id}/revoke`, as(boss.token))).status).toBe(200);
    const by = { member_id: boss.memberId };
    expect(await trail(boss.token)).toEqual([
      boss.signup,
      ["key.created", by, { key_id: created.key_id, label: "ci" }],
      ["key.rotated", by, { key_id: created.key_id, replaced_by: rotated.key_id, label: "ci" }],
      ["key.revoked", by, { key_id: rotated.key_id }],
    ]);
    // A refused change records nothing.
    expectErrorShape(await call("POST", `/customer/keys/${rotated.key_id}/revoke`, as(boss.token)), 409, "key_not_active");
    expect(await audit(boss.token)).toHaveLength(4);
  });

  test("signup: the first key's creation, by the new owner, is the new tenant's first receipt", async () => {
    const boss = await owner();
    const [entry, ...more] = await audit(boss.token);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ event: "key.created", seq: 0, actor: { member_id: boss.memberId }, target: { key_id: boss.firstKeyId, label: "default" } });
    expect(entry.receipt).toMatchObject({ kind: "event", key_id: null, decision: null, seq: 0, tenant_id: boss.tenantId });
    const head = (await call("GET", "/customer/receipts/checkpoint", as(boss.token))).body;
    expect(head.tree_size).toBe(1);
    // An event, not a decision: the first protect is the tenant's first stored receipt.
    expect((await call("GET", "/customer/dashboard", as(boss.token))).body.usage).toEqual({ protect_today: 0, execute_today: 0, receipts_stored: 0 });
  });

  test("policies: published, restored, tests changed; versions name who published them", async () => {
    const boss = await owner();
    await setPlan(boss.tenantId, "pro");
    const document = { default_effect: "deny", default_reason: "closed", rules: [] };
    const published = (await call("PUT", "/customer/policy", { json: { document }, ...as(boss.token) })).body;
    expect(published.published_by).toBe(boss.memberId);
    const cases = [{ name: "read", input: { action: "document.read" }, expect: { decision: "DENIED" } }];
    expect((await call("PUT", "/customer/policy/tests", { json: { cases }, ...as(boss.token) })).status).toBe(200);
    const restored = (await call("POST", "/customer/policy/versions/2/restore", as(boss.token))).body;
    expect(restored).toMatchObject({ version: 3, published_by: boss.memberId });
    const versions = (await call("GET", "/customer/policy/versions", as(boss.token))).body.versions;
    expect(versions.map((v: { published_by: string | null }) => v.published_by)).toEqual([boss.memberId, boss.memberId, null]);

    const by = { member_id: boss.memberId };
    const [policyId, hash] = [published.policy_id, published.hash];
    const events = await trail(boss.token);
    expect(events.slice(0, 2)).toEqual([boss.signup, ["policy.published", by, { policy_id: policyId, version: 2, hash }]]);
    expect(events[2]).toEqual(["policy.tests_changed", by, { cases: 1, hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }]);
    expect(events[3]).toEqual(["policy.restored", by, { policy_id: policyId, version: 3, hash, restored_from: 2 }]);
    expect(events).toHaveLength(4);
  });

  test("upgrades: requested and cancelled by the owner; approved and rejected by an operator, with actor {operator}", async () => {
    const { db } = await testService();
    const boss = await owner();
    const first = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "soon" }, ...as(boss.token) })).body;
    expect(first.requested_by).toBe(boss.memberId);
    expect((await call("POST", `/customer/upgrades/${first.request_id}/cancel`, as(boss.token))).status).toBe(200);
    const second = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "now" }, ...as(boss.token) })).body;
    const [approved] = await runOpsScript<{ reviewed_at: string }>(db, "ops/upgrades_approve", { request_id: second.request_id, reviewer: "ops-alice" });
    // Signed after the review's commit: in the log where the worker appends it (`at` says when it happened).
    await operatorEventsAppended();
    const third = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "enterprise", reason: "more" }, ...as(boss.token) })).body;
    await runOpsScript(db, "ops/upgrades_reject", { request_id: third.request_id, reviewer: "ops-bob", note: "Tell us more." });
    await operatorEventsAppended();

    const by = { member_id: boss.memberId };
    expect(await trail(boss.token)).toEqual([
      boss.signup,
      ["upgrade.requested", by, { request_id: first.request_id, plan: "pro" }],
      ["upgrade.cancelled", by, { request_id: first.request_id, plan: "pro" }],
      ["upgrade.requested", by, { request_id: second.request_id, plan: "pro" }],
      ["upgrade.approved", { operator: "ops-alice" }, { request_id: second.request_id, plan: "pro", previous_plan: "free" }],
      ["upgrade.requested", by, { request_id: third.request_id, plan: "enterprise" }],
      ["upgrade.rejected", { operator: "ops-bob" }, { request_id: third.request_id, plan: "enterprise" }],
    ]);
    // The operator's event says when the review happened; its receipt was signed after, as its own request.
    const entry = (await audit(boss.token, "?event=upgrade.approved"))[0];
    expect(entry.at).toBe(approved.reviewed_at);
    expect(entry.receipt.request_id).toMatch(/^ops-\d+$/);
    expect(Date.parse(entry.receipt.timestamp)).toBeGreaterThanOrEqual(Date.parse(entry.at));
  });

  test("features granted and revoked, sessions ended: an operator's, named by the script's reviewer", async () => {
    const { db } = await testService();
    const boss = await owner();
    await runOpsScript(db, "ops/features_grant", { tenant_id: boss.tenantId, feature: "sso", reviewer: "ops-carol" });
    await runOpsScript(db, "ops/features_revoke", { tenant_id: boss.tenantId, feature: "sso", reviewer: "ops-dan" });
    await runOpsScript(db, "ops/sessions_end", { tenant_id: boss.tenantId, reviewer: "ops-erin" });
    await operatorEventsAppended();
    // The owner was signed out by the operator: a new session reads the trail.
    const login = await call("POST", "/auth/login", { json: { email: boss.email, password: GOOD_PASSWORD }, service });
    expect(await trail(login.body.token)).toEqual([
      boss.signup,
      ["feature.granted", { operator: "ops-carol" }, { feature: "sso" }],
      ["feature.revoked", { operator: "ops-dan" }, { feature: "sso" }],
      ["sessions.ended", { operator: "ops-erin" }, { members: 1 }],
    ]);
  });

  test("the second factor: enabled and disabled, in the log of every tenant the person belongs to, as their member there", async () => {
    const first = await owner();
    const second = await owner();
    const { token } = await invited(second.token, first.email, "viewer");
    const accepted = await call("POST", "/auth/invitations/accept", { json: { token }, ...as(first.token) });
    expect(accepted.status).toBe(200);
    const memberThere = accepted.body.member_id as string;

    const secret = (await call("POST", "/customer/account/mfa/enroll", { json: {}, ...as(first.token) })).body.secret as string;
    expect((await call("POST", "/customer/account/mfa/confirm", { json: { code: await generate({ secret }) }, ...as(first.token) })).status).toBe(200);
    const recovery = (await call("POST", "/customer/account/mfa/recovery-codes", { json: { password: GOOD_PASSWORD, code: await generate({ secret, epoch: Date.now() / 1000 + 30 }) }, ...as(first.token) })).body.recovery_codes as string[];
    expect((await call("POST", "/customer/account/mfa/disable", { json: { password: GOOD_PASSWORD, code: recovery[0] }, ...as(first.token) })).status).toBe(200);

    const here = { member_id: first.memberId };
    const there = { member_id: memberThere };
    expect(await trail(first.token)).toEqual([
      first.signup,
      ["mfa.enabled", here, here],
      ["mfa.disabled", here, here],
    ]);
    expect((await trail(second.token)).slice(-2)).toEqual([
      ["mfa.enabled", there, there],
      ["mfa.disabled", there, there],
    ]);
  });

  test("settings: the settings that changed, with their new values; a PUT that changes nothing records nothing", async () => {
    const boss = await owner();
    expect((await call("PUT", "/customer/settings", { json: { allow_self_approval: true }, ...as(boss.token) })).status).toBe(200);
    expect((await call("PUT", "/customer/settings", { json: { allow_self_approval: true, require_mfa: false }, ...as(boss.token) })).status).toBe(200);
    expect((await call("PUT", "/customer/settings", { json: { allow_self_approval: false }, ...as(boss.token) })).status).toBe(200);
    const by = { member_id: boss.memberId };
    expect(await trail(boss.token)).toEqual([
      boss.signup,
      ["settings.changed", by, { allow_self_approval: true }],
      ["settings.changed", by, { allow_self_approval: false }],
    ]);
  });
});

describe("GET /customer/audit", () => {
  /** An owner whose trail holds 8 events: the first key's creation at signup, then 4 key.*, 3 member.* (interleaved). */
  async function busyOwner() {
    const boss = await owner();
    for (const label of ["a", "b"]) {
      const key = (await call("POST", "/customer/keys", { json: { label }, ...as(boss.token) })).body;
      await call("POST", `/customer/keys/${key.key_id}/revoke`, as(boss.token));
      await invited(boss.token, uniqueEmail(label), "viewer");
    }
    await invited(boss.token, uniqueEmail("c"), "developer");
    return boss;
  }

  test("newest first, page by page with limit and cursor, each event once; the event filter: one event, or a family", async () => {
    const boss = await busyOwner();
    const all = await audit(boss.token);
    expect(all.map((e) => e.event)).toEqual(["member.invited", "member.invited", "key.revoked", "key.created", "member.invited", "key.revoked", "key.created", "key.created"]);
    expect(all.map((e) => e.seq)).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);

    const seen: Entry[] = [];
    let cursor: string | null = null;
    do {
      const reply: { body: { events: Entry[]; next_cursor: string | null } } = await call("GET", `/customer/audit?limit=3${cursor ? `&cursor=${cursor}` : ""}`, as(boss.token));
      expect(reply.body.events.length).toBeLessThanOrEqual(3);
      seen.push(...reply.body.events);
      cursor = reply.body.next_cursor;
    } while (cursor);
    expect(seen.map((e) => e.receipt_id)).toEqual(all.map((e) => e.receipt_id));

    expect((await audit(boss.token, "?event=key.revoked")).map((e) => e.seq)).toEqual([5, 2]);
    expect((await audit(boss.token, "?event=key.*")).map((e) => e.event)).toEqual(["key.revoked", "key.created", "key.revoked", "key.created", "key.created"]);
    const page = await call("GET", "/customer/audit?event=member.*&limit=2", as(boss.token));
    expect(page.body.events.map((e: Entry) => e.seq)).toEqual([7, 6]);
    const rest = await audit(boss.token, `?event=member.*&cursor=${page.body.next_cursor}`);
    expect(rest.map((e) => e.seq)).toEqual([3]);
    expect(await audit(boss.token, "?event=mfa.*")).toEqual([]);
  });

  test("each event carries its receipt exactly as GET /customer/receipts/{id} shows it, and the log lists it among the decisions", async () => {
    const boss = await owner();
    expect((await protect(boss.apiKey)).status).toBe(200);
    const key = (await call("POST", "/customer/keys", { json: { label: "x" }, ...as(boss.token) })).body;
    expect((await protect(boss.apiKey)).status).toBe(200);
    const [entry] = await audit(boss.token);
    expect(entry).toMatchObject({ event: "key.created", seq: 2, target: { key_id: key.key_id, label: "x" } });
    const one = await call("GET", `/customer/receipts/${entry.receipt_id}`, as(boss.token));
    expect(one.body.receipt).toEqual(entry.receipt);
    expect(entry.receipt).toMatchObject({ kind: "event", key_id: null, decision: null, protect_receipt_id: null, seq: 2, tenant_id: boss.tenantId });
    expect(entry.receipt.payload).toEqual({ v: 2, kind: "event", event: entry.event, actor: entry.actor, target: entry.target, at: entry.at });
    const log = (await call("GET", "/customer/receipts", as(boss.token))).body.receipts;
    expect(log.map((r: { kind: string }) => r.kind)).toEqual(["protect", "event", "protect", "event"]);
  });

  test("bad limit, cursor or event: 400 invalid_request; every role reads it; no session: 401", async () => {
    const boss = await owner();
    for (const query of ["limit=0", "limit=101", "limit=x", "cursor=nope", "cursor=" + "a".repeat(300), "event=key", "event=key.", "event=nope.*", "event=key.exploded", "event=*", "other=1"]) {
      expectErrorShape(await call("GET", `/customer/audit?${query}`, as(boss.token)), 400, "invalid_request");
    }
    const viewer = await joined(boss.token, "viewer");
    expect((await audit(viewer.token)).map((e) => e.event)).toEqual(["member.joined", "member.invited", "key.created"]);
    expectErrorShape(await call("GET", "/customer/audit", { service }), 401, "unauthorized");
  });

  test("another tenant sees none of it: not in its trail, its log, nor by id", async () => {
    const a = await owner();
    const b = await owner();
    await call("POST", "/customer/keys", { json: { label: "mine" }, ...as(a.token) });
    const [event] = await audit(a.token);
    // b's own log: its signup's event only.
    expect(await trail(b.token)).toEqual([b.signup]);
    expect((await call("GET", "/customer/receipts", as(b.token))).body.receipts.map((r: { receipt_id: string }) => r.receipt_id)).toEqual((await audit(b.token)).map((e) => e.receipt_id));
    expectErrorShape(await call("GET", `/customer/receipts/${event.receipt_id}`, as(b.token)), 404, "not_found");
    expectErrorShape(await call("GET", `/customer/receipts/${event.receipt_id}/proof`, as(b.token)), 404, "not_found");
    // a's cursor, used by b, pages through b's own trail only.
    const paged = await audit(b.token, `?cursor=${(await call("GET", "/customer/audit?limit=1", as(a.token))).body.next_cursor}`);
    expect(paged.map((e) => [e.event, e.receipt.tenant_id])).toEqual([["key.created", b.tenantId]]);
  });
});

describe("an event is a receipt like a decision", () => {
  /** A key.created event of a new tenant with decisions around it, and its proof bundle at the current checkpoint. */
  async function eventBundle() {
    const boss = await owner();
    await protect(boss.apiKey);
    await call("POST", "/customer/keys", { json: { label: "proved" }, ...as(boss.token) });
    await protect(boss.apiKey);
    await protect(boss.apiKey);
    const [entry] = await audit(boss.token);
    const get = async (path: string) => (await call("GET", path, as(boss.token))).body;
    const checkpoint = await get("/customer/receipts/checkpoint");
    const proof = await get(`/customer/receipts/${entry.receipt_id}/proof?tree_size=${checkpoint.tree_size}`);
    const jwks = (await call("GET", "/.well-known/jwks.json", { service })).body;
    return { boss, entry, bundle: { receipt: entry.receipt, proof, checkpoint }, jwks };
  }

  const write = (name: string, value: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };
  const verifyProof = (bundle: unknown, jwks: unknown) =>
    runCli(["verify", "--proof", write(`bundle-${crypto.randomUUID()}.json`, bundle), "--jwks", write(`jwks-${crypto.randomUUID()}.json`, jwks)], {
      DATABASE_URL: undefined, WARDEN_URL: "https://127.0.0.1:1", LOG_LEVEL: "silent",
    });

  test("its proof bundle passes `warden verify --proof` and the in-code check; a changed target, actor or event fails both", async () => {
    const { entry, bundle, jwks } = await eventBundle();
    expect(await verifyProofBundle(bundle, jwks)).toEqual({ verified: true, checks: { content_hash: true, signature: true, chain_hash: true, inclusion: true, checkpoint: true } });
    const ok = await verifyProof(bundle, jwks);
    expect([ok.code, ok.json.verified]).toEqual([0, true]);

    const tampered = (payload: Record<string, unknown>) => ({ ...bundle, receipt: { ...entry.receipt, payload: { ...entry.receipt.payload, ...payload } } });
    for (const change of [{ target: { key_id: "key_someoneelse", label: "proved" } }, { actor: { operator: "nobody" } }, { event: "key.revoked" }]) {
      const outcome = await verifyProofBundle(tampered(change), jwks);
      expect([outcome.verified, outcome.checks.content_hash]).toEqual([false, false]);
    }
    const failed = await verifyProof(tampered({ target: {} }), jwks);
    expect([failed.code, failed.json.verified, failed.json.checks.content_hash]).toEqual([1, false, false]);
    // Claims a decision, or names a key: the signature covers what the receipt shows.
    expect((await verifyProofBundle({ ...bundle, receipt: { ...entry.receipt, key_id: "key_x" } }, jwks)).verified).toBe(false);
    expect((await verifyProofBundle({ ...bundle, receipt: { ...entry.receipt, decision: "ALLOWED" } }, jwks)).verified).toBe(false);
  }, 60_000);

  test("POST /v1/verify accepts a stored event: signed, hashed, stored unchanged, and claiming no decision", async () => {
    const { boss, entry } = await eventBundle();
    const verify = (receipt: unknown) => call("POST", "/v1/verify", { json: { receipt }, headers: apiKey(boss.apiKey), service });
    expect((await verify(entry.receipt)).body).toEqual({ ok: true, verified: true, checks: { content_hash: true, signature: true, decision: true, stored: true } });
    const changed = await verify({ ...entry.receipt, payload: { ...entry.receipt.payload, target: {} } });
    expect(changed.body).toMatchObject({ verified: false, checks: { content_hash: false, stored: false } });
    expect((await verify({ ...entry.receipt, decision: "ALLOWED" })).body).toMatchObject({ verified: false, checks: { decision: false } });
  });

  test("`ops receipts check` walks the chain with events mixed in: every link, signature and the head's count of events", async () => {
    const { db } = await testService();
    const { boss } = await eventBundle();
    await call("POST", "/customer/keys", { json: { label: "another" }, ...as(boss.token) });
    const check = await checkReceiptLog(db, boss.tenantId);
    expect(check).toMatchObject({ ok: true, receipts: 6, problems: [] });
    expect(check!.root_hash).toBe((await call("GET", "/customer/receipts/checkpoint", as(boss.token))).body.root_hash);
  });
});

describe("events count toward no quota", () => {
  test("events take no storage: with 999 of 1,000 decisions stored, changes are recorded and the 1,000th decision still fits; then storage is full", async () => {
    const boss = await owner();
    // Free: 1,000 stored (and 1,000 a day).
    const replies = await pool(999, 16, () => protect(boss.apiKey));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    const usage = async () => (await call("GET", "/customer/dashboard", as(boss.token))).body.usage;
    expect(await usage()).toEqual({ protect_today: 999, execute_today: 0, receipts_stored: 999 });

    const key = await call("POST", "/customer/keys", { json: { label: "after" }, ...as(boss.token) });
    expect(key.status).toBe(201);
    expect((await call("POST", `/customer/keys/${key.body.key_id}/revoke`, as(boss.token))).status).toBe(200);
    expect((await call("PUT", "/customer/settings", { json: { allow_self_approval: true }, ...as(boss.token) })).status).toBe(200);
    expect((await audit(boss.token)).map((e) => e.event)).toEqual(["settings.changed", "key.revoked", "key.created", "key.created"]);
    expect(await usage()).toEqual({ protect_today: 999, execute_today: 0, receipts_stored: 999 });

    expect((await protect(boss.apiKey)).status).toBe(200);
    const refused = await protect(boss.apiKey);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: "quota_exceeded", limit: "receipts_stored" });
    // Full of decisions, the log still takes events, and they still take no storage.
    expect((await call("POST", "/customer/keys", { json: { label: "full" }, ...as(boss.token) })).status).toBe(201);
    expect(await usage()).toEqual({ protect_today: 1000, execute_today: 0, receipts_stored: 1000 });
    expect((await call("GET", "/customer/receipts/checkpoint", as(boss.token))).body.tree_size).toBe(1005);
    expect((await protect(boss.apiKey)).body).toMatchObject({ error: "quota_exceeded", limit: "receipts_stored" });
  }, 120_000);
});

describe("a change whose event cannot be written does not happen", () => {
  test("with the signer failing, a key is neither created nor revoked, a role not changed, a policy not published: 500, and nothing recorded", async () => {
    const { db } = await testService();
    // A second service on the same database whose signer cannot sign events.
    const broken = await createService(testConfig(), { db, log: createLogger("silent") });
    try {
      broken.deps.signer.signHeld = () => Promise.reject(new Error("the signing key is gone"));
      const boss = await owner();
      await setPlan(boss.tenantId, "pro");
      const dev = await joined(boss.token, "developer");
      const via = { headers: bearer(boss.token), service: broken };
      const keysBefore = (await call("GET", "/customer/keys", as(boss.token))).body.keys;
      const eventsBefore = await audit(boss.token);

      expect((await call("POST", "/customer/keys", { json: { label: "never" }, ...via })).status).toBe(500);
      expect((await call("POST", `/customer/keys/${keysBefore[0].key_id}/revoke`, via)).status).toBe(500);
      expect((await call("PATCH", `/customer/members/${dev.memberId}`, { json: { role: "admin" }, ...via })).status).toBe(500);
      expect((await call("PUT", "/customer/policy", { json: { document: { default_effect: "allow", default_reason: "open", rules: [] } }, ...via })).status).toBe(500);

      expect((await call("GET", "/customer/keys", as(boss.token))).body.keys).toEqual(keysBefore);
      expect((await call("GET", "/customer/members", as(boss.token))).body.members.find((m: { member_id: string }) => m.member_id === dev.memberId).role).toBe("developer");
      expect((await call("GET", "/customer/policy", as(boss.token))).body.version).toBe(1);
      expect(await audit(boss.token)).toEqual(eventsBefore);
      expect((await testOne<{ plan: string }>(db, "tenant_plan", [boss.tenantId]))!.plan).toBe("pro");
    } finally {
      await broken.close();
    }
  });
});
