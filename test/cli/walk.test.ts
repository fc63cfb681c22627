// signup, protect and proof: the walk from a new account to a receipt proven in the signed log,
// with only the CLI (a real HTTPS server in this process, the CLI as a child process).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../src/app/server.ts";
import { GOOD_PASSWORD, testConfig, uniqueEmail } from "../helpers/service.ts";
import { runCli, type CliRun } from "../helpers/cli.ts";

const SLOW = 60_000;
let dir: string;
let url: string;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-cli-walk-"));
  const started = await serve(testConfig({ port: 0, dataDir: join(dir, "data"), databaseUrl: process.env.TEST_DATABASE_URL, logLevel: "warn" }));
  stop = started.stop;
  url = started.url;
}, SLOW);

afterAll(async () => {
  await stop?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, SLOW);

/** The command against this file's service, with no credential but those given. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, { WARDEN_URL: url, WARDEN_INSECURE: "1", WARDEN_API_KEY: undefined, WARDEN_TOKEN: undefined, ...env });
}

function saved(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** export lines as a POSIX shell reads them (single-quoted values). */
function exported(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/^export (\w+)='([^']*)'$/gm)].map((m) => [m[1], m[2]]));
}

describe("warden signup", () => {
  test("prints the account as JSON; with --env as export lines; a second signup is refused on stderr", async () => {
    const email = uniqueEmail("cli-signup");
    const json = await cli(["signup", "--email", email, "--password", GOOD_PASSWORD]);
    expect(json.code).toBe(0);
    expect(json.json).toMatchObject({ ok: true, email_verified: false });
    expect(json.json.api_key).toStartWith("warden_live_");
    expect(json.stderr).toContain("the API key is shown this once");

    const env = await cli(["signup", "--email", uniqueEmail("cli-signup-env"), "--password", GOOD_PASSWORD, "--env"]);
    expect(env.code).toBe(0);
    const vars = exported(env.stdout);
    expect(Object.keys(vars).sort()).toEqual(["WARDEN_API_KEY", "WARDEN_TOKEN"]);
    expect(vars.WARDEN_API_KEY).toStartWith("warden_live_");
    // The exported key works.
    expect((await cli(["simulate", "--preset", "small_payment"], { WARDEN_API_KEY: vars.WARDEN_API_KEY })).code).toBe(0);

    const again = await cli(["signup", "--email", email, "--password", GOOD_PASSWORD, "--env"]);
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 1, stdout: "" });
    expect(again.stderr).toStartWith("error: the service refused POST /auth/signup: HTTP 409 email_taken: ");
  }, SLOW);

  test("bad usage: exit 2", async () => {
    for (const args of [["signup"], ["signup", "--email", "a@example.com"], ["signup", "--password", "x"], ["signup", "--email", "a@example.com", "--password", "p", "extra"]]) {
      const run = await cli(args);
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(run.stderr).toContain("usage: warden signup --email EMAIL --password PASSWORD");
    }
  }, SLOW);
});

describe("warden protect and warden proof", () => {
  let key: string;
  let token: string;

  beforeAll(async () => {
    const run = await cli(["signup", "--email", uniqueEmail("cli-walk"), "--password", GOOD_PASSWORD, "--env"]);
    if (run.code !== 0) throw new Error(`signup failed: ${run.stderr}`);
    ({ WARDEN_API_KEY: key, WARDEN_TOKEN: token } = exported(run.stdout));
  }, SLOW);

  test("protect stores a decision; proof makes its bundle, by file or by id; verify --proof checks it", async () => {
    const decision = await cli(["protect", "--action", "payment.send", "--amount", "250", "--currency", "USD", "--request-id", "walk-1"], { WARDEN_API_KEY: key });
    expect(decision.code).toBe(0);
    expect(decision.json).toMatchObject({ ok: true, verified: false, kind: "protect", request_id: "walk-1", payload: { input: { action: "payment.send", amount: 250, currency: "USD" } } });
    expect(decision.json.receipt_id).toMatch(/^rcpt_/);
    expect(decision.stderr).toContain('note: "verified": false is what the service sends on every result');
    const decisionFile = saved("decision.json", decision.stdout);

    for (const source of [decisionFile, decision.json.receipt_id]) {
      const bundle = await cli(["proof", source], { WARDEN_TOKEN: token });
      expect({ source, code: bundle.code, stderr: bundle.stderr }).toEqual({ source, code: 0, stderr: "" });
      expect(Object.keys(bundle.json).sort()).toEqual(["checkpoint", "proof", "receipt"]);
      expect(bundle.json.receipt.receipt_id).toBe(decision.json.receipt_id);
      expect(bundle.json.proof.tree_size).toBe(bundle.json.checkpoint.tree_size);
      const checked = await cli(["verify", "--proof", saved("bundle.json", bundle.stdout)]);
      expect(checked.code).toBe(0);
      expect(checked.json).toMatchObject({ ok: true, verified: true, checks: { inclusion: true, checkpoint: true } });
    }
  }, SLOW);

  test("protect: a refusal goes to stderr, exit 1; bad usage and a missing key exit 2", async () => {
    const unknown = await cli(["protect", "--action", "payment.send", "--currency", "usd"], { WARDEN_API_KEY: key });
    expect({ code: unknown.code, stdout: unknown.stdout }).toEqual({ code: 1, stdout: "" });
    expect(unknown.stderr).toStartWith("error: the service refused POST /v1/protect: HTTP 400 invalid_request: ");
    const noKey = await cli(["protect", "--action", "payment.send"]);
    expect({ code: noKey.code, stdout: noKey.stdout, stderr: noKey.stderr.trim() }).toEqual({ code: 2, stdout: "", stderr: "error: set WARDEN_API_KEY to an API key: the api_key that warden signup prints" });
    for (const args of [["protect"], ["protect", "--action", "a", "--amount", "many"], ["protect", "--action", "a", "--amount", ""], ["protect", "--action", "a", "--bogus"]]) {
      const run = await cli(args, { WARDEN_API_KEY: key });
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(run.stderr).toContain("usage: warden protect --action ACTION");
    }
  }, SLOW);

  test("proof: what names no stored receipt is said so, exit 2; the service's refusals exit 1", async () => {
    const simulation = await cli(["simulate", "--preset", "small_payment"], { WARDEN_API_KEY: key });
    const cases: [string, string, string][] = [
      ["simulation.json", simulation.stdout, "is a simulation: simulations are not stored in the log, so none has a proof (warden protect makes a stored decision)"],
      ["error.json", JSON.stringify({ ok: false, error: "unauthorized", message: "Invalid API key.", request_id: "req_1" }), "is an error the service answered, not a decision: unauthorized: Invalid API key. (request_id req_1)"],
      ["other.json", "{}", "names no receipt: it has no receipt_id (save what warden protect prints)"],
      ["empty.json", "", "is empty (did the command that wrote it fail?)"],
    ];
    for (const [name, text, message] of cases) {
      const run = await cli(["proof", saved(name, text)], { WARDEN_TOKEN: token });
      expect({ name, code: run.code, stdout: run.stdout, stderr: run.stderr.trim() }).toEqual({ name, code: 2, stdout: "", stderr: `error: ${join(dir, name)} ${message}` });
    }
    const noToken = await cli(["proof", "rcpt_" + "A".repeat(22)]);
    expect({ code: noToken.code, stderr: noToken.stderr }).toEqual({ code: 2, stderr: expect.stringContaining("error: set WARDEN_TOKEN to a session token") });
    const unknown = await cli(["proof", "rcpt_" + "A".repeat(22)], { WARDEN_TOKEN: token });
    expect({ code: unknown.code, stdout: unknown.stdout }).toEqual({ code: 1, stdout: "" });
    expect(unknown.stderr).toContain("HTTP 404 not_found");
    const badToken = await cli(["proof", "rcpt_" + "A".repeat(22)], { WARDEN_TOKEN: "not.a.token" });
    expect({ code: badToken.code, stdout: badToken.stdout }).toEqual({ code: 1, stdout: "" });
    expect(badToken.stderr).toContain("HTTP 401 unauthorized");
    expect(badToken.stderr).toContain("is WARDEN_TOKEN a session token");
  }, SLOW);
});
