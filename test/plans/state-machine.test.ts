// The database refuses every illegal upgrade transition, also when attempted directly in SQL.
import { describe, expect, test } from "bun:test";
import { DbError } from "../../src/db/index.ts";
import { newId } from "../../src/ids.ts";
import { approve } from "../helpers/ops.ts";
import { call, signup, testService } from "../helpers/service.ts";
import { refusedConstraint, testQuery, testOne } from "../helpers/sql.ts";

async function sqlState(promise: Promise<unknown>): Promise<string> {
  const outcome = await promise.then((v) => ({ v }), (e: unknown) => ({ e }));
  if (!("e" in outcome)) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.v)}`);
  expect(outcome.e).toBeInstanceOf(DbError);
  return (outcome.e as DbError).sqlstate;
}

async function pendingRequest(plan = "pro") {
  const user = await signup();
  const reply = await call("POST", "/customer/upgrades/request", { json: { requested_plan: plan, reason: "sql test" }, headers: { authorization: `Bearer ${user.token}` } });
  return { user, requestId: reply.body.request_id as string };
}

describe("upgrade_requests in SQL", () => {
  test("approved -> pending, approved -> rejected, cancelled -> approved are refused", async () => {
    const { db } = await testService();
    const a = await pendingRequest();
    await approve(a.requestId);
    expect(await sqlState(testQuery(db, "upgrade_set_status", [a.requestId, "pending"]))).toBe("WU002");
    expect(await sqlState(testQuery(db, "upgrade_set_status", [a.requestId, "rejected"]))).toBe("WU002");
    const c = await pendingRequest();
    await db.query("plans/upgrade_cancel", [c.user.tenantId, c.requestId]);
    expect(await sqlState(testQuery(db, "upgrade_set_status", [c.requestId, "approved"]))).toBe("WU002");
    expect(await sqlState(testQuery(db, "upgrade_set_status", [c.requestId, "pending"]))).toBe("WU002");
  });

  test("a pending request cannot be set back to pending, and no request is ever deleted", async () => {
    const { db } = await testService();
    const p = await pendingRequest();
    expect(await sqlState(testQuery(db, "upgrade_set_status", [p.requestId, "pending"]))).toBe("WU002");
    expect(await sqlState(testQuery(db, "upgrade_delete", [p.requestId]))).toBe("WU002");
  });

  test("a second pending request is refused by the partial unique index", async () => {
    const { db } = await testService();
    const p = await pendingRequest();
    const err = await testQuery(db, "upgrade_insert_raw", [newId("upgr_"), p.user.tenantId, "free", "enterprise", "pending"]).catch((e) => e);
    expect(err).toBeInstanceOf(DbError);
    expect(err.sqlstate).toBe("23505");
    expect(refusedConstraint(err)).toBe("upgrade_requests_one_pending");
  });

  test("a request that starts in a terminal state, or asks for a downgrade, is refused", async () => {
    const { db } = await testService();
    const user = await signup();
    expect(await sqlState(testQuery(db, "upgrade_insert_raw", [newId("upgr_"), user.tenantId, "free", "pro", "approved"]))).toBe("WU002");
    expect(await sqlState(testQuery(db, "upgrade_insert_raw", [newId("upgr_"), user.tenantId, "pro", "free", "pending"]))).toBe("WU001");
    expect(await sqlState(testQuery(db, "upgrade_insert_raw", [newId("upgr_"), user.tenantId, "free", "free", "pending"]))).toBe("WU001");
    expect(await sqlState(db.query("plans/upgrade_create", [newId("upgr_"), user.tenantId, "free", "no", null]))).toBe("WU001");
    expect(await sqlState(db.query("plans/upgrade_create", [newId("upgr_"), user.tenantId, "nonsense", "no", null]))).toBe("WU001");
  });

  test("after an approval to pro, a request for pro (a non-upgrade) is refused", async () => {
    const { db } = await testService();
    const p = await pendingRequest("pro");
    await approve(p.requestId);
    expect(await sqlState(db.query("plans/upgrade_create", [newId("upgr_"), p.user.tenantId, "pro", "again", null]))).toBe("WU001");
  });
});

describe("tenants.plan in SQL", () => {
  test("a direct plan change is refused, up or down", async () => {
    const { db } = await testService();
    const user = await signup();
    expect(await sqlState(testQuery(db, "tenant_set_plan", [user.tenantId, "enterprise"]))).toBe("WU003");
    const p = await pendingRequest("pro");
    await approve(p.requestId);
    expect(await sqlState(testQuery(db, "tenant_set_plan", [p.user.tenantId, "free"]))).toBe("WU003");
    expect((await testOne<{ plan: string }>(db, "tenant_plan", [p.user.tenantId]))!.plan).toBe("pro");
  });

  test("a plan change naming a request is refused unless that request approved exactly this plan and is new", async () => {
    const { db } = await testService();
    const pending = await pendingRequest("pro");
    // A pending request is no approval.
    expect(await sqlState(testQuery(db, "plan_set_as_approved", [pending.user.tenantId, "pro", pending.requestId]))).toBe("WU003");
    const p = await pendingRequest("pro");
    await approve(p.requestId);
    // The approved request of pro does not carry the tenant to enterprise, nor twice to its plan.
    expect(await sqlState(testQuery(db, "plan_set_as_approved", [p.user.tenantId, "enterprise", p.requestId]))).toBe("WU003");
    // Nor does another tenant's approved request.
    expect(await sqlState(testQuery(db, "plan_set_as_approved", [pending.user.tenantId, "pro", p.requestId]))).toBe("WU003");
    // The request behind the plan changes only with the plan.
    expect(await sqlState(testQuery(db, "plan_set_as_approved", [p.user.tenantId, "pro", pending.requestId]))).toBe("WU003");
    expect((await testOne<{ plan: string }>(db, "tenant_plan", [p.user.tenantId]))!.plan).toBe("pro");
  });
});
