// examples/approval-agent.ts run as a reader would run it against a real HTTPS server: the refund is
// held, the agent waits with ?wait=30 while a member votes, then executes the outcome receipt (or,
// denied, stops with exit 1).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../src/app/server.ts";
import { createLogger } from "../../src/log.ts";
import { bearer, setPlan } from "../helpers/customer.ts";
import { addMember, type Member } from "../helpers/members.ts";
import { call, signup, testConfig, testService } from "../helpers/service.ts";

const ROOT = join(import.meta.dir, "..", "..");
const POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [{ id: "refunds_over_100", effect: "require_approval", reason: "refund_over_100", when: { actions: ["refund.issue"], amount: { gt: 100 } }, approval: { quorum: 1 } }],
};

let dir: string;
let started: Awaited<ReturnType<typeof serve>>;
let owner: Awaited<ReturnType<typeof signup>>;
let approver: Member;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-approval-agent-"));
  const { db } = await testService();
  owner = await signup();
  await setPlan(owner.tenantId, "pro");
  // Before the server starts: its mail worker (no SMTP, mail to DATA_DIR) would take the invitation.
  approver = await addMember(owner.token, "approver");
  started = await serve(testConfig({ port: 0, dataDir: dir }), { db, log: createLogger("silent") });
  expect((await call("PUT", "/customer/policy", { json: { document: POLICY }, headers: bearer(owner.token) })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await started?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the example; `decide` votes once its approval is pending (read from the agent's own output). */
async function runAgent(decide: (approvalId: string, actionHash: string) => Promise<void>, amount = "250") {
  const child = Bun.spawn([process.execPath, "examples/approval-agent.ts"], {
    cwd: ROOT,
    env: { ...process.env, WARDEN_URL: started.url, WARDEN_API_KEY: owner.apiKey, NODE_TLS_REJECT_UNAUTHORIZED: "0", REFUND_AMOUNT: amount },
    stdout: "pipe",
    stderr: "pipe",
  });
  let stdout = "";
  const decoder = new TextDecoder();
  let voted: Promise<void> | undefined;
  const reader = child.stdout.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    stdout += decoder.decode(read.value);
    const pending = /approval (apv_\w+) pending until \S+; action_hash (0x[0-9a-f]{64})/.exec(stdout);
    // The agent is waiting (its first GET ?wait=30 goes out right after this line): vote.
    if (pending && !voted) voted = Bun.sleep(300).then(() => decide(pending[1], pending[2]));
  }
  await voted;
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, code, summary: JSON.parse(stdout.trim().split("\n").at(-1)!) };
}

const vote = (id: string, v: "approve" | "deny", actionHash: string) =>
  call("POST", `/customer/approvals/${id}/votes`, { json: { vote: v, action_hash: actionHash }, headers: bearer(approver.token) });

test("examples/approval-agent.ts waits for the approval, then executes the outcome receipt and prints each receipt", async () => {
  const run = await runAgent(async (id, hash) => expect((await vote(id, "approve", hash)).status).toBe(200));
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
  expect(run.stdout).toContain("protect: DENIED (refund_over_100)");
  expect(run.stdout).toMatch(/approval apv_\w+: approved, votes approve rcpt_/);
  expect(run.summary).toEqual({
    ok: true,
    status: "executed",
    protect_receipt_id: expect.stringMatching(/^rcpt_/),
    vote_receipt_ids: [expect.stringMatching(/^rcpt_/)],
    outcome_receipt_id: expect.stringMatching(/^rcpt_/),
    execute_receipt_id: expect.stringMatching(/^rcpt_/),
  });
  // The execute in the log is of the outcome, and the approval says executed.
  const executed = await call("GET", `/customer/receipts/${run.summary.execute_receipt_id}`, { headers: bearer(owner.token) });
  expect(executed.body.receipt).toMatchObject({ kind: "execute", decision: "ALLOWED", protect_receipt_id: run.summary.outcome_receipt_id });
}, 60_000);

test("denied by a member: the agent stops with exit 1 and executes nothing", async () => {
  const run = await runAgent(async (id, hash) => expect((await vote(id, "deny", hash)).status).toBe(200), "300");
  expect(run.code).toBe(1);
  expect(run.summary).toEqual({ ok: false, status: "denied", protect_receipt_id: expect.stringMatching(/^rcpt_/), outcome_receipt_id: expect.stringMatching(/^rcpt_/) });
  expect(run.stdout).not.toContain("executed:");
}, 60_000);
