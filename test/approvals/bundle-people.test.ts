// The offline check of an approval bundle counts people, not memberships: a bundle in which one
// person approved twice (voted, left, was invited back and voted again) is refused by
// verifyApprovalBundle(), which `warden verify --proof`, the console and the SDK all run. Such a
// bundle is made on a database of its own whose per-person vote rules are switched off, as a server
// that counted memberships would have stored it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { verifyApprovalBundle } from "../../src/approvals/bundle.ts";
import { createService, type Service } from "../../src/app/service.ts";
import { openDb, type Db } from "../../src/db/index.ts";
import { createLogger } from "../../src/log.ts";
import { bearer } from "../helpers/accounts.ts";
import { invitationToken } from "../helpers/members.ts";
import { call, testConfig, uniqueEmail, GOOD_PASSWORD } from "../helpers/service.ts";
import { planSetAsApproved, testQuery } from "../helpers/sql.ts";

const APPROVAL_POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [{ id: "refund_needs_two", effect: "require_approval", reason: "refund_over_100", when: { actions: ["refund.issue"] }, approval: { quorum: 2 } }],
};

let db: Db;
let service: Service;

beforeAll(async () => {
  db = await openDb({ dataDir: "memory://", poolSize: 2 });
  service = await createService(testConfig(), { db, log: createLogger("silent") });
});
afterAll(async () => {
  await service?.close();
  await db?.close();
});

const on = (method: string, path: string, opts: Parameters<typeof call>[2] = {}) => call(method, path, { ...opts, service });
const signupHere = async () => {
  const email = uniqueEmail();
  const reply = await on("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD } });
  expect(reply.status).toBe(201);
  return { email, token: reply.body.token as string, tenantId: reply.body.tenant_id as string, apiKey: reply.body.api_key as string };
};

test("a bundle whose quorum of two is one person twice does not verify (checks.votes false)", async () => {
  const owner = await signupHere();
  expect(await planSetAsApproved(db, owner.tenantId, "pro")).toHaveLength(1);
  expect((await on("PUT", "/customer/policy", { json: { document: APPROVAL_POLICY }, headers: bearer(owner.token) })).status).toBe(200);
  const dana = await signupHere();
  const join = async () => {
    const token = await invitationToken(owner.token, dana.email, "approver", service);
    const accepted = await on("POST", "/auth/invitations/accept", { json: { token }, headers: bearer(dana.token) });
    expect(accepted.status).toBe(200);
    return { token: accepted.body.token as string, memberId: accepted.body.member_id as string };
  };
  const asked = await on("POST", "/v1/protect", { json: { action: "refund.issue", amount: 250, currency: "EUR" }, headers: { "x-api-key": owner.apiKey } });
  const { approval_id, action_hash } = asked.body.approval;
  const vote = (who: { token: string }) => on("POST", `/customer/approvals/${approval_id}/votes`, { json: { vote: "approve", action_hash }, headers: bearer(who.token) });

  const first = await join();
  expect((await vote(first)).body.status).toBe("pending");
  await on("DELETE", `/customer/members/${first.memberId}`, { headers: bearer(first.token) });
  const second = await join();
  // The service refuses it...
  expect((await vote(second)).body.error).toBe("already_voted");
  // ...and a server that counted memberships would have approved.
  await testQuery(db, "approval_votes_unguarded");
  const approved = await vote(second);
  expect(approved.body.status).toBe("approved");
  expect(new Set(approved.body.votes.map((v: { member_id: string }) => v.member_id)).size).toBe(2);

  const bundle = (await on("GET", `/customer/approvals/${approval_id}/bundle`, { headers: bearer(owner.token) })).body;
  const jwks = (await on("GET", "/.well-known/jwks.json")).body;
  const checked = await verifyApprovalBundle(bundle, jwks);
  expect(checked.checks).toEqual({ receipts_in_log: true, protect: true, votes: false, outcome: true, execute: true });
  expect(checked.verified).toBe(false);
});
