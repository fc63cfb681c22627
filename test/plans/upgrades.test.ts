// The upgrade request lifecycle over HTTP, reviewed through the operator scripts.
import { describe, expect, test } from "bun:test";
import { DbError } from "../../src/db/index.ts";
import { approve, planOf, reject } from "../helpers/ops.ts";
import { call, expectErrorShape, signup, subjectOf, testService } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const requestUpgrade = (token: string, requested_plan: unknown, reason: unknown = "We need more protect calls.") =>
  call("POST", "/customer/upgrades/request", { json: { requested_plan, reason }, headers: auth(token) });
const list = async (token: string) => (await call("GET", "/customer/upgrades", { headers: auth(token) })).body.upgrades;

async function refusal(promise: Promise<unknown>): Promise<DbError> {
  const outcome = await promise.then((v) => ({ v }), (e: unknown) => ({ e }));
  if (!("e" in outcome)) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.v)}`);
  expect(outcome.e).toBeInstanceOf(DbError);
  return outcome.e as DbError;
}

describe("POST /customer/upgrades/request", () => {
  test("creates a pending request with the documented fields", async () => {
    const user = await signup();
    const reply = await requestUpgrade(user.token, "pro", "Launching next week");
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.body).sort()).toEqual(["created_at", "ok", "reason", "request_id", "requested_by", "requested_plan", "status"]);
    // The request names the member who asked.
    expect(reply.body).toMatchObject({ ok: true, status: "pending", requested_plan: "pro", reason: "Launching next week", requested_by: subjectOf(user.token).member_id });
    expect(reply.body.request_id).toMatch(/^upgr_[0-9A-Za-z]{22}$/);
    expect(reply.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test("a second request while one is pending: 409 upgrade_pending", async () => {
    const user = await signup();
    expect((await requestUpgrade(user.token, "pro")).status).toBe(201);
    expectErrorShape(await requestUpgrade(user.token, "enterprise"), 409, "upgrade_pending");
  });

  test("parallel requests: exactly one is created", async () => {
    const user = await signup();
    const replies = await Promise.all(Array.from({ length: 10 }, () => requestUpgrade(user.token, "pro")));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 201)) expectErrorShape(r, 409, "upgrade_pending");
    expect(await list(user.token)).toHaveLength(1);
  });

  for (const plan of ["free", "gold", "", "PRO", "pro "]) {
    test(`plan ${JSON.stringify(plan)} on the free plan is invalid_plan`, async () => {
      const user = await signup();
      expectErrorShape(await requestUpgrade(user.token, plan), 400, "invalid_plan");
    });
  }

  test("bad bodies: invalid_request; no session: 401", async () => {
    const user = await signup();
    expectErrorShape(await requestUpgrade(user.token, 5), 400, "invalid_request");
    expectErrorShape(await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro" }, headers: auth(user.token) }), 400, "invalid_request");
    expectErrorShape(await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "x", plan: "pro" }, headers: auth(user.token) }), 400, "invalid_request");
    expectErrorShape(await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "x" } }), 401, "unauthorized");
    expectErrorShape(await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "x" }, headers: { "x-api-key": user.apiKey } }), 401, "unauthorized");
  });
});

describe("GET /customer/upgrades and cancel", () => {
  test("lists newest first; cancel moves pending to cancelled once", async () => {
    const user = await signup();
    const first = (await requestUpgrade(user.token, "pro", "first")).body;
    const cancelled = await call("POST", `/customer/upgrades/${first.request_id}/cancel`, { headers: auth(user.token) });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ ok: true, request_id: first.request_id, status: "cancelled" });
    expectErrorShape(await call("POST", `/customer/upgrades/${first.request_id}/cancel`, { headers: auth(user.token) }), 409, "not_pending");
    const second = (await requestUpgrade(user.token, "enterprise", "second")).body;
    const upgrades = await list(user.token);
    expect(upgrades.map((u: { request_id: string }) => u.request_id)).toEqual([second.request_id, first.request_id]);
    expect(upgrades[1]).toEqual({
      request_id: first.request_id, status: "cancelled", requested_plan: "pro", reason: "first", created_at: first.created_at, reviewed_at: null, review_note: null,
      requested_by: subjectOf(user.token).member_id,
    });
  });

  test("another tenant's request, or an unknown one, is 404 and stays pending", async () => {
    const [owner, stranger] = await Promise.all([signup(), signup()]);
    const req = (await requestUpgrade(owner.token, "pro")).body;
    expectErrorShape(await call("POST", `/customer/upgrades/${req.request_id}/cancel`, { headers: auth(stranger.token) }), 404, "not_found");
    expectErrorShape(await call("POST", "/customer/upgrades/upgr_AAAAAAAAAAAAAAAAAAAAAA/cancel", { headers: auth(owner.token) }), 404, "not_found");
    expect((await list(owner.token))[0].status).toBe("pending");
    expect(await list(stranger.token)).toEqual([]);
  });
});

describe("operator review", () => {
  test("rejection: the note reaches the tenant, and a new request may follow", async () => {
    const user = await signup();
    const req = (await requestUpgrade(user.token, "enterprise")).body;
    const [row] = await reject(req.request_id, "  Tell us about your volume first.  ");
    expect(row).toMatchObject({ request_id: req.request_id, status: "rejected", review_note: "Tell us about your volume first." });
    const [item] = await list(user.token);
    expect(item).toMatchObject({ status: "rejected", review_note: "Tell us about your volume first." });
    expect(item.reviewed_at).toMatch(/Z$/);
    expect(await planOf(user.tenantId)).toBe("free");
    expect((await requestUpgrade(user.token, "pro")).status).toBe(201);
    expectErrorShape(await call("POST", `/customer/upgrades/${req.request_id}/cancel`, { headers: auth(user.token) }), 409, "not_pending");
  });

  test("approval: the plan changes at once, and only upward requests remain possible", async () => {
    const user = await signup();
    const req = (await requestUpgrade(user.token, "pro")).body;
    const [row] = await approve(req.request_id, "alice");
    expect(row).toMatchObject({ request_id: req.request_id, status: "approved", plan: "pro" });
    expect(await planOf(user.tenantId)).toBe("pro");
    expect((await list(user.token))[0]).toMatchObject({ status: "approved", review_note: null });
    // The session and key keep working across the plan change.
    expect((await call("POST", "/v1/simulate", { json: { preset: "read_document" }, headers: { "x-api-key": user.apiKey } })).status).toBe(200);
    expectErrorShape(await requestUpgrade(user.token, "pro"), 400, "invalid_plan");
    expectErrorShape(await requestUpgrade(user.token, "free"), 400, "invalid_plan");
    const next = await requestUpgrade(user.token, "enterprise");
    expect(next.status).toBe(201);
    await approve(next.body.request_id);
    expect(await planOf(user.tenantId)).toBe("enterprise");
  });

  test("review emails are queued with the decision in the review's transaction", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    await approve((await requestUpgrade(a.token, "pro")).body.request_id);
    await reject((await requestUpgrade(b.token, "pro")).body.request_id, "Not yet.");
    const { db } = await testService();
    const mailA = (await testQuery<{ kind: string; recipient: string; data: Record<string, unknown> }>(db, "mail_for_tenant", [a.tenantId])).filter((m) => m.kind.startsWith("upgrade_"));
    const mailB = (await testQuery<{ kind: string; recipient: string; data: Record<string, unknown> }>(db, "mail_for_tenant", [b.tenantId])).filter((m) => m.kind.startsWith("upgrade_"));
    expect(mailA).toEqual([{ kind: "upgrade_approved", recipient: a.email, data: expect.objectContaining({ plan: "pro" }) }]);
    expect(mailB).toEqual([{ kind: "upgrade_rejected", recipient: b.email, data: expect.objectContaining({ plan: "pro", review_note: "Not yet." }) }]);
  });

  test("terminal requests never move again, through the scripts", async () => {
    const user = await signup();
    const req = (await requestUpgrade(user.token, "pro")).body;
    await approve(req.request_id);
    expect((await refusal(approve(req.request_id))).sqlstate).toBe("WU002");
    expect((await refusal(reject(req.request_id, "too late"))).sqlstate).toBe("WU002");
    const other = (await requestUpgrade(user.token, "enterprise")).body;
    await call("POST", `/customer/upgrades/${other.request_id}/cancel`, { headers: auth(user.token) });
    expect((await refusal(approve(other.request_id))).sqlstate).toBe("WU002");
    expect(await planOf(user.tenantId)).toBe("pro");
  });

  test("a rejection needs a note and a review needs a reviewer", async () => {
    const user = await signup();
    const req = (await requestUpgrade(user.token, "pro")).body;
    expect((await refusal(reject(req.request_id, "   "))).sqlstate).toBe("WU004");
    expect((await refusal(approve(req.request_id, " "))).sqlstate).toBe("WU004");
    expect((await refusal(approve("upgr_AAAAAAAAAAAAAAAAAAAAAA"))).sqlstate).toBe("WU004");
    expect((await list(user.token))[0].status).toBe("pending");
  });

  test("approve and cancel at once: exactly one wins, every time", async () => {
    for (let round = 0; round < 20; round++) {
      const user = await signup();
      const req = (await requestUpgrade(user.token, "pro")).body;
      const [approved, cancelled] = await Promise.all([
        approve(req.request_id).then(() => true, (e) => (e instanceof DbError && e.sqlstate === "WU002" ? false : Promise.reject(e))),
        call("POST", `/customer/upgrades/${req.request_id}/cancel`, { headers: auth(user.token) }).then((r) => {
          if (r.status === 200) return true;
          expectErrorShape(r, 409, "not_pending");
          return false;
        }),
      ]);
      expect(Number(approved) + Number(cancelled)).toBe(1);
      const [item] = await list(user.token);
      expect(item.status).toBe(approved ? "approved" : "cancelled");
      expect(await planOf(user.tenantId)).toBe(approved ? "pro" : "free");
    }
  });
});
