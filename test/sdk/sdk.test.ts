// The SDK as its users get it: `npm run build:sdk`'s package, packed and installed into a scratch
// project, a small agent (test/sdk/agent/agent.ts) typechecked against its declarations and run
// on Node, Bun and Deno against a running service: signup, a key made with the session, protect,
// the result and its proof bundle verified offline, a tile of the log through its named path
// parameter, an approval's bundle verified offline, an AuthZEN evaluation, a webhook signature
// made by the standardwebhooks package.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { buildSdk, SDK_NAME } from "../../scripts/build-sdk.ts";
import { serve } from "../../src/app/server.ts";
import { createLogger } from "../../src/log.ts";
import { apiKey, bearer, execute, protect, setPlan, SMALL_PAYMENT } from "../helpers/customer.ts";
import { addMember } from "../helpers/members.ts";
import { call, signup, testConfig, testService, uniqueEmail, GOOD_PASSWORD } from "../helpers/service.ts";
import { CHROMIUM, chromiumAvailable } from "../console/chromium.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, "node_modules", ".bin");
let work: string;
let sdk: string;
let scratch: string;
let dataDir: string;
let started: Awaited<ReturnType<typeof serve>>;
/** The bundle of an approval two approvers granted and the agent executed (GET /customer/approvals/{id}/bundle). */
let approvalBundle: unknown;

/** An approval through HTTP, start to end: a refund held for two approvers, approved, executed. */
async function approvedBundle(): Promise<unknown> {
  const owner = await signup();
  await setPlan(owner.tenantId, "pro");
  const policy = {
    default_effect: "deny",
    default_reason: "no_rule_matched",
    rules: [{ id: "refund_needs_two", effect: "require_approval", reason: "refund_over_100", when: { actions: ["refund.issue"] }, approval: { quorum: 2, expires_in: 600, execute_within: 300 } }],
  };
  expect((await call("PUT", "/customer/policy", { json: { document: policy }, headers: bearer(owner.token) })).status).toBe(200);
  const asked = (await protect(owner.apiKey, { action: "refund.issue", amount: 250, currency: "EUR" })).body;
  const { approval_id, action_hash } = asked.approval;
  let outcome = "";
  for (const approver of [await addMember(owner.token, "approver"), await addMember(owner.token, "approver")]) {
    outcome = (await call("POST", `/customer/approvals/${approval_id}/votes`, { json: { vote: "approve", action_hash }, headers: bearer(approver.token) })).body.outcome_receipt_id;
  }
  expect((await execute(owner.apiKey, outcome)).status).toBe(200);
  return (await call("GET", `/customer/approvals/${approval_id}/bundle`, { headers: bearer(owner.token) })).body;
}

/** Runs a command in the scratch project; its exit code, output and errors. */
async function run(cmd: string[], env: Record<string, string> = {}) {
  const child = Bun.spawn(cmd, { cwd: scratch, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "warden-sdk-test-"));
  sdk = join(work, "sdk");
  scratch = join(work, "scratch");
  dataDir = join(work, "data");
  await buildSdk(sdk);
  const { db } = await testService();
  started = await serve(testConfig({ port: 0, dataDir }), { db, log: createLogger("silent") });
  approvalBundle = await approvedBundle();

  // Packed and installed as from a registry: only what the package ships reaches the project.
  Bun.spawnSync(["mkdir", "-p", scratch]);
  const pack = Bun.spawnSync(["npm", "pack", "--silent", "--pack-destination", scratch], { cwd: sdk, stdout: "pipe", stderr: "pipe" });
  expect(pack.exitCode).toBe(0);
  const tarball = pack.stdout.toString().trim().split("\n").at(-1)!;
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "scratch-agent", private: true, type: "module" }));
  const install = await run(["npm", "install", "--offline", "--no-audit", "--no-fund", `./${tarball}`]);
  expect(install.code).toBe(0);
  copyFileSync(join(import.meta.dir, "agent", "agent.ts"), join(scratch, "agent.ts"));
  // A consumer's strict settings under Node's own module resolution, library declarations checked too.
  const compilerOptions = { target: "ES2022", module: "nodenext", moduleResolution: "nodenext", lib: ["ES2023", "DOM"], types: [], strict: true, skipLibCheck: false, resolveJsonModule: true };
  writeFileSync(join(scratch, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["agent.ts"] }));
}, 120_000);

afterAll(async () => {
  await started?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the package", () => {
  test("an ESM module with declarations and no dependency, for any runtime: no node: import, no Node or Bun global", () => {
    const manifest = JSON.parse(readFileSync(join(sdk, "package.json"), "utf8"));
    expect(manifest).toMatchObject({ name: SDK_NAME, type: "module", exports: { ".": { types: "./index.d.ts", default: "./index.js" } } });
    expect(manifest.dependencies).toBeUndefined();
    const js = readFileSync(join(sdk, "index.js"), "utf8");
    expect(js).not.toMatch(/\bfrom\s*["'](node:|[a-z@])/);
    expect(js).not.toMatch(/\brequire\(|\bimport\(["']/);
    expect(js).not.toMatch(/\b(process|Buffer|Bun|Deno)\./);
    for (const name of ["createWarden", "postV1Protect", "postAccessV1Evaluations", "getCustomerLogTileByTile", "verifyResult", "verifyProofBundle", "verifyApprovalBundle", "verifyWebhook", "fetchProofBundle"]) {
      expect(js).toMatch(new RegExp(`\\b${name}\\b`));
    }
    expect(existsSync(join(sdk, "gen", "types.gen.d.ts"))).toBe(true);
  });

  test("its types are the API's: a program that sends a wrong body fails to typecheck", async () => {
    writeFileSync(join(scratch, "wrong.ts"), `import { createWarden, postV1Protect } from "${SDK_NAME}";\nawait postV1Protect({ client: createWarden({ baseUrl: "https://x" }), body: { action: 5 } });\n`);
    writeFileSync(join(scratch, "tsconfig.wrong.json"), JSON.stringify({ extends: "./tsconfig.json", files: ["wrong.ts"], compilerOptions: { noEmit: true } }));
    const tsc = await run([join(BIN, "tsc"), "-p", "tsconfig.wrong.json"]);
    expect(tsc.code).not.toBe(0);
    expect(tsc.stdout).toContain("wrong.ts(2,");
    expect(tsc.stdout).toContain("error TS2322");
  }, 60_000);
});

describe("a small agent on the package, against the running service", () => {
  /** The agent's input: the service, a new person, and a delivery signed by the reference implementation. */
  function writeInput(tag: string): void {
    const secret = "whsec_" + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
    const body = JSON.stringify({ type: "approval.requested", timestamp: new Date().toISOString(), data: { approval_id: "apv_1" } });
    const id = "msg_" + crypto.randomUUID();
    const at = new Date();
    const headers = { "webhook-id": id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": new Webhook(secret).sign(id, at, body) };
    writeFileSync(join(scratch, "input.json"), JSON.stringify({ baseUrl: started.url, email: uniqueEmail(`sdk-${tag}`), password: GOOD_PASSWORD, webhook: { secret, body, headers }, approval: approvalBundle }));
  }

  function expectAgentRan(out: { code: number; stdout: string; stderr: string }): void {
    expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 0, stderr: "" });
    const summary = JSON.parse(out.stdout.trim().split("\n").at(-1)!);
    expect(summary).toEqual({
      decision: "ALLOWED",
      verified: true,
      tampered: false,
      proof: { verified: true, checks: { content_hash: true, signature: true, chain_hash: true, inclusion: true, checkpoint: true } },
      // The signup's key.created event, the agent key's, then the protect: a tile of three 32-byte hashes.
      tree_size: 3,
      tile_bytes: 96,
      approval: { verified: true, status: "approved", approvers: 2, without_vote: false },
      authzen: { decision: true, context: { receipt_id: expect.stringMatching(/^rcpt_/), reason_user: "payment_within_limit" } },
      webhook: "approval.requested",
      forged: "refused",
    });
  }

  // The service's development certificate, trusted the way each runtime offers.
  const ca = () => join(dataDir, "tls", "dev-cert.pem");

  test("typechecks under strict nodenext and runs on Node", async () => {
    writeInput("node");
    const tsc = await run([join(BIN, "tsc"), "-p", "tsconfig.json"]);
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.code).toBe(0);
    expectAgentRan(await run(["node", "agent.js"], { NODE_EXTRA_CA_CERTS: ca() }));
  }, 60_000);

  test("runs on Bun", async () => {
    writeInput("bun");
    expectAgentRan(await run([process.execPath, "agent.ts"], { NODE_EXTRA_CA_CERTS: ca() }));
  }, 60_000);

  test("runs on Deno", async () => {
    writeInput("deno");
    expectAgentRan(await run([join(BIN, "deno"), "run", "--quiet", "--allow-net", "--allow-read", `--cert=${ca()}`, "agent.ts"], { DENO_NO_UPDATE_CHECK: "1" }));
  }, 60_000);
});

describe("in a browser", () => {
  // Without Chromium the console's browser tests already fail in CI (test/console); here a skip.
  test.skipIf(!chromiumAvailable)("the verifiers run on the page's WebCrypto: a result, its proof bundle, an approval's bundle, a webhook", async () => {
    const { chromium } = await import("playwright-core");
    const owner = await signup();
    const result = (await call("POST", "/v1/protect", { json: SMALL_PAYMENT, headers: apiKey(owner.apiKey) })).body;
    const jwt = bearer(owner.token);
    const checkpoint = (await call("GET", "/customer/receipts/checkpoint", { headers: jwt })).body;
    const receipt = (await call("GET", `/customer/receipts/${result.receipt_id}`, { headers: jwt })).body;
    const proof = (await call("GET", `/customer/receipts/${result.receipt_id}/proof?tree_size=${checkpoint.tree_size}`, { headers: jwt })).body;
    const jwks = (await call("GET", "/.well-known/jwks.json")).body;
    const secret = "whsec_" + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
    const body = JSON.stringify({ type: "webhook.test", timestamp: new Date().toISOString(), data: {} });
    const at = new Date();
    const headers = { "webhook-id": "msg_1", "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": new Webhook(secret).sign("msg_1", at, body) };

    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
    try {
      const page = await browser.newPage();
      const js = readFileSync(join(sdk, "index.js"), "utf8");
      // An https origin (WebCrypto needs a secure context) served by the test itself.
      await page.route("https://sdk.test/**", (route) =>
        route.request().url().endsWith("/index.js")
          ? route.fulfill({ contentType: "text/javascript", body: js })
          : route.fulfill({ contentType: "text/html", body: `<script type="module">import * as sdk from "./index.js"; window.sdk = sdk;</script>` }),
      );
      await page.goto("https://sdk.test/");
      await page.waitForFunction(() => "sdk" in window);
      const outcome = await page.evaluate(
        async ({ result, bundle, approval, jwks, webhook }) => {
          const sdk = (window as unknown as { sdk: any }).sdk;
          return {
            result: await sdk.verifyResult(result, jwks),
            tampered: (await sdk.verifyResult({ ...result, decision: "DENIED" }, jwks)).verified,
            bundle: await sdk.verifyProofBundle(bundle, jwks),
            approval: (await sdk.verifyApprovalBundle(approval, jwks)).checks,
            webhook: (await sdk.verifyWebhook(webhook.secret, webhook.body, webhook.headers)).type,
          };
        },
        { result, bundle: { receipt, proof, checkpoint }, approval: approvalBundle, jwks, webhook: { secret, body, headers } },
      );
      expect(outcome).toEqual({
        result: { verified: true, checks: { content_hash: true, signature: true } },
        tampered: false,
        bundle: { verified: true, checks: { content_hash: true, signature: true, chain_hash: true, inclusion: true, checkpoint: true } },
        approval: { receipts_in_log: true, protect: true, votes: true, outcome: true, execute: true },
        webhook: "webhook.test",
      });
    } finally {
      await browser.close();
    }
  }, 60_000);
});
