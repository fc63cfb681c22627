// `warden approvals list|show|approve|deny` as a person runs it: the CLI as a child process against
// a real HTTPS server on the shared test database, with WARDEN_TOKEN of a member.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../src/app/server.ts";
import { createLogger } from "../../src/log.ts";
import { bearer, protect, setPlan } from "../helpers/customer.ts";
import { addMember, type Member } from "../helpers/members.ts";
import { call, signup, testConfig, testService } from "../helpers/service.ts";
import { runCli } from "../helpers/cli.ts";
import { contentHash } from "../../src/crypto/canonical.ts";

const SLOW = 60_000;
const POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [{ id: "refunds_over_100", effect: "require_approval", reason: "refund_over_100", when: { actions: ["refund.issue"], amount: { gt: 100 } }, approval: { quorum: 1 } }],
};
const REFUND = { action: "refund.issue", resource: "order/77", amount: 250, currency: "EUR" };

let dir: string;
let started: Awaited<ReturnType<typeof serve>>;
let owner: Awaited<ReturnType<typeof signup>>;
let alice: Member;
let bob: Member;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-approvals-cli-"));
  const { db } = await testService();
  owner = await signup();
  await setPlan(owner.tenantId, "pro");
  // Before the server starts: its mail worker (no SMTP, mail to DATA_DIR) would take the invitations.
  [alice, bob] = await Promise.all([addMember(owner.token, "approver"), addMember(owner.token, "approver")]);
  started = await serve(testConfig({ port: 0, dataDir: dir }), { db, log: createLogger("silent") });
  expect((await call("PUT", "/customer/policy", { json: { document: POLICY }, headers: bearer(owner.token) })).status).toBe(200);
}, SLOW);

afterAll(async () => {
  await started?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, SLOW);

const cli = (args: string[], token: string | undefined) => runCli(["approvals", ...args], { WARDEN_URL: started.url, WARDEN_INSECURE: "1", WARDEN_TOKEN: token, LOG_LEVEL: "silent" });

// Each test holds an action of its own: a retry of the same one answers the approval it has.
let held_ = 0;
async function held() {
  const input = { ...REFUND, resource: `order/${77 + held_++}` };
  const reply = await protect(owner.apiKey, input);
  expect(reply.body.decision).toBe("DENIED");
  return { ...(reply.body.approval as { approval_id: string; action_hash: string }), input };
}

describe("warden approvals", () => {
  test("list shows the inbox (--status pending) and show the exact input, key, rule and receipts", async () => {
    const { approval_id, action_hash, input } = await held();
    const pending = await cli(["list", "--status", "pending", "--limit", "100"], alice.token);
    expect(pending.code).toBe(0);
    expect(pending.json.ok).toBe(true);
    const row = pending.json.approvals.find((a: { approval_id: string }) => a.approval_id === approval_id);
    expect(row).toMatchObject({ status: "pending", action_hash, rule: "refunds_over_100", quorum: 1 });
    expect(pending.json.approvals.every((a: { status: string }) => a.status === "pending")).toBe(true);

    const shown = await cli(["show", approval_id], alice.token);
    expect(shown.code).toBe(0);
    expect(shown.json).toMatchObject({ ok: true, approval_id, status: "pending", input, rule: "refunds_over_100", reason: "refund_over_100", action_hash });
    expect(shown.json.receipts.map((r: { kind: string }) => r.kind)).toEqual(["protect"]);
  }, SLOW);

  test("approve sends the action hash shown, prints what was approved, and the approval is decided", async () => {
    const { approval_id, action_hash, input } = await held();
    const run = await cli(["approve", approval_id, "--comment", "checked the order"], alice.token);
    expect({ code: run.code, stderr: run.stderr }).toEqual({
      code: 0,
      stderr: `approved: refund.issue 250 EUR on ${input.resource} (action_hash ${action_hash}, rule refunds_over_100); approval ${approval_id} is now approved\n`,
    });
    expect(run.json).toMatchObject({ ok: true, vote: "approve", voted_on: { approval_id, action_hash, input, rule: "refunds_over_100" }, approval: { status: "approved" } });
    expect(run.json.approval.votes).toEqual([expect.objectContaining({ member_id: alice.memberId, vote: "approve" })]);
    // The vote's receipt holds the comment's hash, not the text.
    const vote = await call("GET", `/customer/receipts/${run.json.approval.votes[0].receipt_id}`, { headers: bearer(alice.token) });
    expect(vote.body.receipt.payload).toMatchObject({ kind: "vote", action_hash, comment_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });

    // Decided: a later vote is the service's refusal, on stderr, exit 1, nothing on stdout.
    const late = await cli(["deny", approval_id], bob.token);
    expect(late.code).toBe(1);
    expect(late.stdout).toBe("");
    expect(late.stderr).toContain("HTTP 409 not_pending");
  }, SLOW);

  test("deny denies; the service's refusals (self_approval, not_found) exit 1 and say why", async () => {
    const { approval_id, input } = await held();
    const self = await cli(["approve", approval_id], owner.token);
    expect(self.code).toBe(1);
    expect(self.stderr).toContain("HTTP 403 self_approval");
    const denied = await cli(["deny", approval_id], bob.token);
    expect(denied.code).toBe(0);
    expect(denied.stderr).toStartWith(`denied: refund.issue 250 EUR on ${input.resource}`);
    expect(denied.json.approval.status).toBe("denied");

    const missing = await cli(["show", "apv_0000000000000000000000"], alice.token);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("HTTP 404 not_found");
    // Another tenant's approval is not found either.
    const stranger = await signup();
    expect((await cli(["show", approval_id], stranger.token)).stderr).toContain("HTTP 404 not_found");
  }, SLOW);

  test("bad usage exits 2 with the command's usage; no token exits 2 and says which variable", async () => {
    for (const args of [[], ["nope"], ["show"], ["show", "a", "b"], ["show", "rcpt_abc"], ["approve", "apv_x", "--status", "pending"], ["list", "--status", "maybe"], ["list", "--limit", "0"], ["list", "extra"]]) {
      const run = await cli(args, alice.token);
      expect([args, run.code]).toEqual([args, 2]);
      expect(run.stderr).toContain("usage: warden approvals");
    }
    const noToken = await cli(["list"], undefined);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain("set WARDEN_TOKEN");
  }, SLOW);

  test("no vote is sent when the protect receipt shown does not hash to the action hash", async () => {
    // A service (or a proxy) that shows one request and names the hash of another.
    const shownPayload = { decision: "DENIED", input: REFUND, kind: "protect" };
    const otherHash = await contentHash({ ...shownPayload, input: { ...REFUND, amount: 25_000 } });
    const posts: string[] = [];
    const fake = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(request) {
        if (request.method === "POST") posts.push(new URL(request.url).pathname);
        const detail = { ok: true, approval_id: "apv_fake", status: "pending", protect_receipt_id: "rcpt_p", action_hash: otherHash, input: REFUND, rule: "r", reason: "r", policy: {}, receipts: [{ receipt_id: "rcpt_p", content_hash: otherHash, payload: shownPayload }] };
        return Response.json(request.method === "GET" ? detail : { ok: true, status: "approved" });
      },
    });
    try {
      const run = await runCli(["approvals", "approve", "apv_fake"], { WARDEN_URL: `http://127.0.0.1:${fake.port}`, WARDEN_TOKEN: "t" });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("does not hash to the action_hash");
      expect(posts).toEqual([]);
    } finally {
      fake.stop(true);
    }
  }, SLOW);
});
