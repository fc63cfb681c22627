// The service as `npm start` runs it (`bun src/cli/main.ts serve`, a process of its own, on a temp
// DATA_DIR or on TEST_DATABASE_URL): an agent's long poll on an approval nobody decides gets its
// answer when the wait ends, not a connection cut by the server's idle timeout (docs/api.md,
// GET /v1/approvals/{approval_id}). Deno's server, which the same listen() starts, is checked too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GOOD_PASSWORD, uniqueEmail } from "../helpers/service.ts";
import { hasDeno, runDeno } from "../helpers/deno.ts";
import { wire } from "../security/helpers.ts";
import { runCli, spawnService, type Child } from "../security/processes.ts";

// A fresh PGlite directory costs its initdb and the baseline: tens of seconds on a busy machine.
const SLOW = 180_000;
const PG = process.env.TEST_DATABASE_URL;
// Past Bun's default idle timeout (10 s), which cut such a wait at about 12 s.
const WAIT_S = 15;

let dir: string;
let child: Child;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-server-"));
  child = await spawnService({ DATA_DIR: join(dir, "data"), ...(PG ? { DATABASE_URL: PG } : {}) }, 120_000);
}, SLOW);

afterAll(async () => {
  child?.proc.kill("SIGTERM");
  await child?.exited;
  if (dir) rmSync(dir, { recursive: true, force: true });
}, SLOW);

/** A tenant on the pro plan (an operator approved its upgrade) whose policy holds payments for approval. */
async function tenantWithApprovals() {
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const signup = await wire(child.url, "POST", "/auth/signup", { json: { email: uniqueEmail("poll"), password: GOOD_PASSWORD } });
  expect(signup.status).toBe(201);
  const { token, api_key: apiKey } = signup.body;
  const request = await wire(child.url, "POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "approvals" }, headers: auth(token) });
  expect(request.status).toBe(201);
  const opsEnv = PG ? { DATABASE_URL: PG, DATA_DIR: join(dir, "unused") } : { DATA_DIR: join(dir, "data"), DATABASE_URL: "" };
  const approved = await runCli(["ops", "upgrades", "approve", request.body.request_id, "--reviewer", "server-test"], opsEnv);
  expect(approved.code).toBe(0);
  const document = {
    default_effect: "deny",
    default_reason: "no_rule_matched",
    rules: [{ id: "payments_need_approval", effect: "require_approval", reason: "payments_need_approval", when: { actions: ["payment.send"] } }],
  };
  const published = await wire(child.url, "PUT", "/customer/policy", { json: { document }, headers: auth(token) });
  expect(published.status).toBe(200);
  return { apiKey: apiKey as string };
}

describe("the service as npm start runs it", () => {
  test(`GET /v1/approvals/{id}?wait=${WAIT_S} on an approval nobody decides: 200, pending, after the wait`, async () => {
    const { apiKey } = await tenantWithApprovals();
    const held = await wire(child.url, "POST", "/v1/protect", { json: { action: "payment.send", amount: 10, currency: "EUR" }, headers: { "x-api-key": apiKey } });
    expect(held.status).toBe(200);
    const approvalId = held.body.approval.approval_id;
    expect(approvalId).toMatch(/^apv_/);
    const started = performance.now();
    const polled = await wire(child.url, "GET", `/v1/approvals/${approvalId}?wait=${WAIT_S}`, { headers: { "x-api-key": apiKey } });
    const seconds = (performance.now() - started) / 1000;
    expect({ status: polled.status, approval: polled.body.approval_id, state: polled.body.status }).toEqual({ status: 200, approval: approvalId, state: "pending" });
    expect(seconds).toBeGreaterThanOrEqual(WAIT_S - 1);
  }, SLOW);
});

describe.skipIf(!hasDeno)("Deno's server", () => {
  test(`a request answered after ${WAIT_S - 2} s is not cut`, async () => {
    const answer = await runDeno(["--allow-net", "--allow-env", "--allow-read", "test/runtime/deno-long-request.ts", String(WAIT_S - 2)]);
    expect(answer).toMatchObject({ runtime: "deno", status: 200, text: "answered" });
    expect(answer.seconds).toBeGreaterThanOrEqual(WAIT_S - 3);
  }, SLOW);
});
