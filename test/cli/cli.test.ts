// The command line end to end, as a user runs it: a real HTTPS server in this process, the CLI as
// a child process talking to it, saved results checked offline.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import canonicalize from "canonicalize";
import { serve } from "../../src/app/server.ts";
import { testConfig, uniqueEmail, GOOD_PASSWORD } from "../helpers/service.ts";
import { runCli, type CliRun } from "../helpers/cli.ts";

// PGlite on disk and the dev certificate take seconds to set up; each CLI run starts a process.
const SLOW = 60_000;
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

let dir: string;
let url: string;
let apiKey: string;
let stop: (() => Promise<void>) | undefined;
let closedUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-cli-"));
  const started = await serve(testConfig({ port: 0, dataDir: join(dir, "data"), databaseUrl: process.env.TEST_DATABASE_URL, logLevel: "warn" }));
  stop = started.stop;
  url = started.url;
  const res = await fetch(`${url}/auth/signup`, {
    ...insecure,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: uniqueEmail("cli"), password: GOOD_PASSWORD }),
  });
  const body = (await res.json()) as { api_key?: string };
  if (res.status !== 201 || typeof body.api_key !== "string") throw new Error(`signup failed: ${res.status} ${JSON.stringify(body)}`);
  apiKey = body.api_key;
  // A port that was just free: nothing listens there during the offline checks.
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  closedUrl = `https://127.0.0.1:${probe.port}`;
  probe.stop(true);
}, SLOW);

afterAll(async () => {
  await stop?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, SLOW);

/** The command against this file's service, as its user (test/helpers/cli.ts). */
function cli(args: string[], opts: { env?: Record<string, string>; stdin?: string } = {}): Promise<CliRun> {
  return runCli(args, { WARDEN_URL: url, WARDEN_INSECURE: "1", WARDEN_API_KEY: apiKey, ...opts.env }, { stdin: opts.stdin });
}

function saved(name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value, null, 2));
  return file;
}

// content_hash as docs/api.md defines it, built without the service's own code.
function independentContentHash(payload: unknown): string {
  return "0x" + createHash("sha256").update(canonicalize(payload)!, "utf8").digest("hex");
}

const flip = (decision: string) => (decision === "ALLOWED" ? "DENIED" : "ALLOWED");

describe("warden simulate", () => {
  test("a preset: exit 0, the server's result, not verified", async () => {
    const run = await cli(["simulate", "--preset", "small_payment"]);
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({ ok: true, decision: "ALLOWED", verified: false, preset: "small_payment" });
    expect(run.json.request_id).toMatch(/^req_/);
    expect(run.json.content_hash).toBe(independentContentHash(run.json.payload));
    // The served field is always false: stderr says so, and how to check.
    expect(run.stderr).toContain('note: "verified": false is what the service sends on every result');
    expect(run.stderr).toContain("warden verify FILE");
  }, SLOW);

  test("--verify with --request-id: exit 0, verified, the caller's request id", async () => {
    const run = await cli(["simulate", "--preset", "large_payment", "--verify", "--request-id", "cli-test-1"]);
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({ ok: true, verified: true, request_id: "cli-test-1", decision: "DENIED", preset: "large_payment" });
    expect(run.stderr).toContain(`note: "verified" here is this command's own offline check`);
  }, SLOW);

  test("--verify refuses a result the server (or a proxy) altered: exit 1, receipt_mismatch", async () => {
    // A plain-HTTP front that passes requests to the real server but flips the decision it returns.
    const front = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        const path = new URL(req.url).pathname;
        const upstream = await fetch(url + path, { ...insecure, method: req.method, headers: req.headers, body: req.method === "POST" ? await req.text() : undefined });
        const body = (await upstream.json()) as Record<string, any>;
        if (path === "/v1/simulate") body.decision = flip(body.decision);
        return Response.json(body, { status: upstream.status });
      },
    });
    try {
      const run = await cli(["simulate", "--preset", "small_payment", "--verify"], { env: { WARDEN_URL: `http://127.0.0.1:${front.port}` } });
      expect(run.code).toBe(1);
      expect(run.json).toMatchObject({ ok: false, verified: false, error: "receipt_mismatch", decision: "DENIED", checks: { content_hash: false, signature: true } });
      // The same front without the --verify flag passes the altered result through unchecked.
      const unchecked = await cli(["simulate", "--preset", "small_payment"], { env: { WARDEN_URL: `http://127.0.0.1:${front.port}` } });
      expect(unchecked.code).toBe(0);
      expect(unchecked.json).toMatchObject({ ok: true, verified: false, decision: "DENIED" });
    } finally {
      front.stop(true);
    }
  }, SLOW);

  // An error the service answered goes to stderr, never to stdout (and the file it is redirected to).
  test("an unknown preset: exit 1 with invalid_preset on stderr", async () => {
    const run = await cli(["simulate", "--preset", "nope"]);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 1, stdout: "" });
    expect(run.stderr).toStartWith("error: the service refused POST /v1/simulate: HTTP 400 invalid_preset: ");
  }, SLOW);

  test("a mistyped API key: exit 1 with unauthorized on stderr, and which variable to check", async () => {
    const broken = apiKey.slice(0, 20) + (apiKey[20] === "A" ? "B" : "A") + apiKey.slice(21);
    const run = await cli(["simulate", "--preset", "small_payment"], { env: { WARDEN_API_KEY: broken } });
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 1, stdout: "" });
    expect(run.stderr).toStartWith("error: the service refused POST /v1/simulate: HTTP 401 unauthorized: ");
    expect(run.stderr).toContain("is WARDEN_API_KEY an API key: the api_key that warden signup prints?");
  }, SLOW);

  test("bad usage exits 2", async () => {
    const runs = await Promise.all([
      cli(["simulate"]),
      cli(["simulate", "--preset", "small_payment", "--bogus"]),
      cli(["frobnicate"]),
      cli(["verify"]),
      cli(["verify", "a.json", "b.json"]),
      cli([]),
      cli(["simulate", "--preset", "small_payment"], { env: { WARDEN_API_KEY: "" } }),
    ]);
    expect(runs.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2, 2]);
    // Usage errors explain themselves on stderr, not as a result on stdout.
    for (const r of runs.slice(0, 5)) {
      expect(r.stderr).toContain("usage: warden");
      expect(r.stdout).toBe("");
    }
  }, SLOW);
});

describe("warden verify", () => {
  let result: Record<string, any>;
  let resultFile: string;
  let jwksFile: string;

  beforeAll(async () => {
    const run = await cli(["simulate", "--preset", "small_payment", "--request-id", "cli-verify-1"]);
    if (run.code !== 0) throw new Error(`simulate failed: ${run.stdout} ${run.stderr}`);
    result = run.json;
    resultFile = saved("result.json", run.stdout);
    const jwks = await (await fetch(`${url}/.well-known/jwks.json`, insecure)).json();
    jwksFile = saved("jwks.json", jwks);
  }, SLOW);

  const good = { ok: true, verified: true, checks: { content_hash: true, signature: true } };

  test("a saved result verifies against the server's JWKS", async () => {
    const run = await cli(["verify", resultFile]);
    expect(run.code).toBe(0);
    expect(run.json).toEqual(good);
    // The file says verified: false, as served; the output's true is this command's check.
    expect(result.verified).toBe(false);
    expect(run.stderr.trim()).toBe(`note: "verified" here is this command's own offline check (content_hash recomputed, signature checked against the JWKS), not the field the service sent, which is always false.`);
  }, SLOW);

  test("with --jwks it works fully offline", async () => {
    const run = await cli(["verify", resultFile, "--jwks", jwksFile], { env: { WARDEN_URL: closedUrl } });
    expect(run.code).toBe(0);
    expect(run.json).toEqual(good);
    // Without --jwks the same command needs the server, which is not there.
    const online = await cli(["verify", resultFile], { env: { WARDEN_URL: closedUrl } });
    expect(online.code).toBe(1);
  }, SLOW);

  test("- reads the result from stdin", async () => {
    const run = await cli(["verify", "-", "--jwks", jwksFile], { stdin: JSON.stringify(result), env: { WARDEN_URL: closedUrl } });
    expect(run.code).toBe(0);
    expect(run.json).toEqual(good);
  }, SLOW);

  const tampered: [string, (r: Record<string, any>) => void, { content_hash: boolean; signature: boolean }][] = [
    ["the shown decision flipped", (r) => void (r.decision = flip(r.decision)), { content_hash: false, signature: true }],
    [
      "the decision flipped in the payload too",
      (r) => {
        r.decision = flip(r.decision);
        r.payload.decision = r.decision;
      },
      { content_hash: false, signature: true },
    ],
    [
      "a modified payload with a correct new content_hash",
      (r) => {
        r.decision = flip(r.decision);
        r.payload.decision = r.decision;
        r.content_hash = independentContentHash(r.payload);
      },
      { content_hash: true, signature: false },
    ],
    ["another request_id", (r) => void (r.request_id = "cli-verify-2"), { content_hash: true, signature: false }],
    ["another timestamp", (r) => void (r.timestamp = new Date(Date.parse(r.timestamp) + 1000).toISOString()), { content_hash: true, signature: false }],
    ["another tenant_id", (r) => void (r.tenant_id = "cust_" + "T".repeat(22)), { content_hash: true, signature: false }],
    ["another key_id", (r) => void (r.key_id = r.key_id === null ? "key_" + "K".repeat(22) : null), { content_hash: true, signature: false }],
    ["a receipt_id added", (r) => void (r.receipt_id = "rcpt_" + "R".repeat(22)), { content_hash: true, signature: false }],
    ["a protect_receipt_id added", (r) => void (r.protect_receipt_id = "rcpt_" + "R".repeat(22)), { content_hash: true, signature: false }],
    ["another kind", (r) => void (r.kind = "protect"), { content_hash: true, signature: false }],
    ["a signature byte changed", (r) => void (r.signature = r.signature.slice(0, -2) + (r.signature.endsWith("AA") ? "BB" : "AA")), { content_hash: true, signature: false }],
    ["no signature", (r) => void delete r.signature, { content_hash: true, signature: false }],
  ];

  for (const [i, [name, change, checks]] of tampered.entries()) {
    test(`tampered (${name}): exit 1, receipt_mismatch`, async () => {
      const copy = structuredClone(result);
      change(copy);
      expect(copy).not.toEqual(result);
      const run = await cli(["verify", saved(`tampered-${i}.json`, copy), "--jwks", jwksFile], { env: { WARDEN_URL: closedUrl } });
      expect(run.code).toBe(1);
      expect(run.json).toEqual({ ok: false, verified: false, checks, error: "receipt_mismatch" });
    }, SLOW);
  }

  test("what is not a result is named, exit 2, not receipt_mismatch", async () => {
    const cases: [string, string, string][] = [
      ["broken.json", "{ not json", "broken.json is not JSON"],
      ["empty.json", "", "empty.json is empty (did the command that wrote it fail?)"],
      [
        "error.json",
        JSON.stringify({ ok: false, error: "unauthorized", message: "Missing or invalid API key.", request_id: "req_1" }),
        "error.json is not a warden result but an error the service answered: unauthorized: Missing or invalid API key. (request_id req_1)",
      ],
      ["random.json", JSON.stringify({ hello: "world" }), "random.json is not a warden result: it has no payload, content_hash or signature"],
      ["number.json", "42", "number.json is not a warden result: it is JSON number, not an object"],
      ["bundle.json", JSON.stringify({ receipt: result, proof: {}, checkpoint: {} }), "bundle.json is not a warden result but a proof bundle: check it with verify --proof"],
    ];
    for (const [name, text, message] of cases) {
      const run = await cli(["verify", saved(name, text), "--jwks", jwksFile], { env: { WARDEN_URL: closedUrl } });
      expect({ name, code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ name, code: 2, stdout: "", stderr: expect.stringContaining(`error: ${join(dir, message)}`) });
    }
  }, SLOW);

  test("a missing file: exit 2 with a message, no stack trace", async () => {
    const run = await cli(["verify", join(dir, "does-not-exist.json"), "--jwks", jwksFile]);
    expect(run.code).toBe(2);
    expect(run.stderr).toStartWith("error:");
    expect(run.stderr).toContain("does-not-exist.json: cannot read it (ENOENT)");
    expect(run.stderr).not.toContain("    at ");
  }, SLOW);
});

describe("warden ops signing-key rotate", () => {
  test("makes a new active key while the service runs; results signed before still verify against the JWKS", async () => {
    const before = await cli(["simulate", "--preset", "small_payment"]);
    expect(before.code).toBe(0);
    // The running service's database: PostgreSQL, or its embedded one through its operator socket.
    const env: Record<string, string> = process.env.TEST_DATABASE_URL
      ? { DATABASE_URL: process.env.TEST_DATABASE_URL }
      : { DATA_DIR: join(dir, "data"), DATABASE_URL: "" };
    const first = await cli(["ops", "signing-key", "rotate"], { env });
    const second = await cli(["ops", "signing-key", "rotate"], { env });
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    expect(first.json.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second.json.kid).not.toBe(first.json.kid);
    // Its JWKS now lists both new keys and the old one.
    const jwks = (await (await fetch(`${url}/.well-known/jwks.json`, insecure)).json()) as { keys: { kid: string }[] };
    const kids = jwks.keys.map((k) => k.kid);
    expect(kids).toContain(first.json.kid);
    expect(kids).toContain(second.json.kid);
    const file = join(dir, "before-rotation.json");
    writeFileSync(file, JSON.stringify(before.json));
    expect((await cli(["verify", file])).code).toBe(0);
  }, SLOW);

  test("under a JWT_SECRET that does not open the active key: rotate refuses (exit 1) and changes nothing; revoke still marks the key", async () => {
    const env: Record<string, string> = process.env.TEST_DATABASE_URL
      ? { DATABASE_URL: process.env.TEST_DATABASE_URL }
      : { DATA_DIR: join(dir, "data"), DATABASE_URL: "" };
    const jwksNow = async () => ((await (await fetch(`${url}/.well-known/jwks.json`, insecure)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    const otherSecret = { ...env, JWT_SECRET: "not the service's secret, 32+ characters long" };
    const before = await jwksNow();
    const refused = await cli(["ops", "signing-key", "rotate"], { env: otherSecret });
    expect({ code: refused.code, json: refused.json, stderr: refused.stderr }).toMatchObject({ code: 1, json: { ok: false, error: "refused" } });
    expect(refused.json.message).toContain("JWT_SECRET");
    expect(await jwksNow()).toEqual(before);
    // A revoke does not wait on the secret: the key is marked, and the successor left to the service.
    // (A key of this test's own, made active just now, as in the revoke test below.)
    const own = await cli(["ops", "signing-key", "rotate"], { env });
    expect(own.code).toBe(0);
    const active = own.json.kid as string;
    const since = new Date(Date.now() - 1000).toISOString();
    const revoked = await cli(["ops", "signing-key", "revoke", active, "--compromised-since", since], { env: otherSecret });
    expect({ code: revoked.code, json: revoked.json, stderr: revoked.stderr }).toMatchObject({ code: 0, json: { ok: true, revoked: { kid: active, status: "retired" }, active_kid: null } });
    const jwks = (await (await fetch(`${url}/.well-known/jwks.json`, insecure)).json()) as { keys: { kid: string; compromised_since?: string }[] };
    expect(jwks.keys.find((k) => k.kid === active)?.compromised_since).toBe(since);
    // Under the service's own secret (here the one kept in its database) the successor is made.
    const rotated = await cli(["ops", "signing-key", "rotate"], { env });
    expect(rotated.code).toBe(0);
    expect(await jwksNow()).toContain(rotated.json.kid);
  }, SLOW);

  test("revoke KID --compromised-since TIME: retires it, makes a successor at once; refusals exit 1, bad usage 2", async () => {
    const env: Record<string, string> = process.env.TEST_DATABASE_URL
      ? { DATABASE_URL: process.env.TEST_DATABASE_URL }
      : { DATA_DIR: join(dir, "ops-data"), DATABASE_URL: "" };
    // A database of its own on the embedded side (ops commands never migrate), so that the running
    // service keeps its signing key.
    // Exit code with stderr, so that a failure shows why (a kid that began with "-" once made revoke exit 2 here: test/cli/ops-args.test.ts).
    const outcome = (r: CliRun) => ({ code: r.code, stderr: r.stderr });
    if (!process.env.TEST_DATABASE_URL) expect(outcome(await cli(["migrate"], { env }))).toMatchObject({ code: 0 });
    const rotated = await cli(["ops", "signing-key", "rotate"], { env });
    expect(outcome(rotated)).toMatchObject({ code: 0 });
    const since = new Date(Date.now() - 1000).toISOString();
    const run = await cli(["ops", "signing-key", "revoke", rotated.json.kid, "--compromised-since", since], { env });
    expect(outcome(run)).toMatchObject({ code: 0 });
    expect(run.json).toMatchObject({ ok: true, revoked: { kid: rotated.json.kid, status: "retired", compromised_since: since } });
    expect(run.json.active_kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(run.json.active_kid).not.toBe(rotated.json.kid);
    const future = await cli(["ops", "signing-key", "revoke", run.json.active_kid, "--compromised-since", new Date(Date.now() + 3_600_000).toISOString()], { env });
    expect([future.code, future.json.ok]).toEqual([1, false]);
    expect((await cli(["ops", "signing-key", "revoke", "no-such-kid", "--compromised-since", since], { env })).code).toBe(1);
    expect((await cli(["ops", "signing-key", "revoke", rotated.json.kid], { env })).code).toBe(2);
    expect((await cli(["ops", "signing-key", "revoke", rotated.json.kid, "--compromised-since", "yesterday-ish"], { env })).code).toBe(2);
    expect((await cli(["ops", "signing-key", "revoke", "--compromised-since", since], { env })).code).toBe(2);
  }, SLOW);

  test("an unknown ops command is bad usage", async () => {
    expect((await cli(["ops", "signing-key", "spin"])).code).toBe(2);
    expect((await cli(["ops"])).code).toBe(2);
  }, SLOW);
});
