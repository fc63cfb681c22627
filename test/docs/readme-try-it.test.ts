// The README's "Try it", run literally: its sh blocks, as they stand in README.md, in `sh -e`
// against a fresh service, from a folder of their own below the repository root (npm finds the
// root; the CLI finds the files where the caller stands). Only WARDEN_URL is set from outside, as
// the snippet allows. Fails when the snippet no longer reaches a checked proof.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { serve } from "../../src/app/server.ts";
import { createLogger } from "../../src/log.ts";
import { verifyProofBundle } from "../../src/receipts/proof-bundle.ts";
import { verifyResult } from "../../src/receipts/verify.ts";
import { testConfig } from "../helpers/service.ts";

const ROOT = join(import.meta.dir, "..", "..");
const SLOW = 180_000;
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

/** A section of README.md, from its `## ` heading to the next one. */
function readmeSection(heading: string): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README.md has no section "${heading}"`);
  const end = readme.indexOf("\n## ", start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The fenced sh blocks of a section, in order, joined. */
function shBlocks(section: string): string {
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).join("\n");
}

let dir: string;
let work: string;
let started: Awaited<ReturnType<typeof serve>>;

beforeAll(async () => {
  // Embedded database, whatever TEST_DATABASE_URL says: the snippet signs up a fixed email.
  const artifacts = join(ROOT, "test", "artifacts");
  mkdirSync(artifacts, { recursive: true });
  dir = mkdtempSync(join(artifacts, "readme-"));
  work = join(dir, "reader");
  mkdirSync(work);
  started = await serve(testConfig({ port: 0, dataDir: join(dir, "data"), databaseUrl: undefined }), { log: createLogger("silent") });
}, SLOW);

afterAll(async () => {
  await started?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, SLOW);

describe("README: Try it", () => {
  test("the snippet needs only Node.js and npm (no jq, no curl)", () => {
    const script = shBlocks(readmeSection("Try it"));
    expect(script).toContain("verify --proof");
    expect(script).not.toMatch(/\bjq\b/);
    expect(script).not.toMatch(/\bcurl\b/);
  });

  test("runs literally in sh -e, from signup to a verified inclusion proof", async () => {
    const section = readmeSection("Try it");
    const script = shBlocks(section);
    // A clean environment: nothing of the test run's npm, and no credential but what the snippet makes.
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (value !== undefined && !name.startsWith("npm_") && !name.startsWith("WARDEN_") && name !== "INIT_CWD") env[name] = value;
    }
    env.WARDEN_URL = started.url;
    // After the snippet, the session token it made, for the tile check below.
    const child = Bun.spawn(["sh", "-e", "-c", `${script}\nprintf '%s' "$WARDEN_TOKEN" > .token\n`], { cwd: work, env, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("error")) }).toEqual({ code: 0, errors: [] });
    expect(stdout).toContain('"inclusion": true');
    // The budget's two cases ran offline and passed (a failing case exits 1, which sh -e stops at).
    expect(script).toContain("warden policy test budget.json budget-cases.json");
    expect(stdout).toMatch(/"passed": 2,\s*"failed": 0/);

    // What it left where the reader stands checks out, independently of the CLI.
    const jwks = (await (await fetch(`${started.url}/.well-known/jwks.json`, insecure)).json()) as { keys: JsonWebKey[] };
    const read = (name: string) => JSON.parse(readFileSync(join(work, name), "utf8"));
    expect((await verifyResult(read("result.json"), jwks)).verified).toBe(true);
    expect(read("result.json").verified).toBe(false);
    expect(await verifyProofBundle(read("bundle.json"), jwks)).toMatchObject({ verified: true });
    expect(existsSync(join(ROOT, "bundle.json"))).toBe(false);

    // The tiles the section names as present after the walk are there, as wide as the log is now.
    const token = readFileSync(join(work, ".token"), "utf8");
    const partial = [...section.matchAll(/`(tile\/[^`]+\.p\/\d+)`/g)].map((m) => m[1]);
    expect(partial.length).toBeGreaterThan(0);
    const head = (await (await fetch(`${started.url}/customer/receipts/checkpoint`, { ...insecure, headers: { authorization: `Bearer ${token}` } })).json()) as { tree_size: number };
    for (const tile of partial) expect({ tile, width: Number(tile.split(".p/")[1]) }).toEqual({ tile, width: head.tree_size });
    for (const tile of partial) {
      const res = await fetch(`${started.url}/customer/log/${tile}`, { ...insecure, headers: { authorization: `Bearer ${token}` } });
      expect({ tile, status: res.status }).toEqual({ tile, status: 200 });
    }
    const full = await fetch(`${started.url}/customer/log/tile/0/000`, { ...insecure, headers: { authorization: `Bearer ${token}` } });
    expect(full.status).toBe(404);
  }, SLOW);
});

describe("README: Approvals", () => {
  test("runs literally after Try it, in the same shell: Pro by the operator's own approval, a held refund approved, its outcome executed once", async () => {
    // A reader of its own (the files of Try it would be in the way of a second signup of the same email).
    const reader = join(dir, "approver");
    mkdirSync(reader);
    const tryIt = shBlocks(readmeSection("Try it")).replace("you@example.com", "approver@example.com");
    const approvals = shBlocks(readmeSection("Approvals"));
    expect(approvals).toContain("warden ops upgrades approve");
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (value !== undefined && !name.startsWith("npm_") && !name.startsWith("WARDEN_") && name !== "INIT_CWD") env[name] = value;
    }
    env.WARDEN_URL = started.url;
    // The operator's commands reach the running service through its DATA_DIR (./data on the default set-up).
    env.DATA_DIR = join(dir, "data");
    const child = Bun.spawn(["sh", "-e", "-c", `${tryIt}\n${approvals}\n`], { cwd: reader, env, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("error")) }).toEqual({ code: 0, errors: [] });
    const read = (name: string) => JSON.parse(readFileSync(join(reader, name), "utf8"));
    expect(read("held.json")).toMatchObject({ decision: "DENIED", approval: { status: "pending" } });
    expect(read("approval.json")).toMatchObject({ status: "approved", outcome_receipt_id: expect.stringMatching(/^rcpt_/) });
    // The last line is the execute's answer.
    expect(JSON.parse(stdout.trim().split("\n").pop()!)).toMatchObject({ ok: true, executed: true, decision: "ALLOWED" });
  }, SLOW);
});

describe("docs/api.md: verified", () => {
  test("says what verified means on the results the service sends", () => {
    const api = readFileSync(join(ROOT, "docs", "api.md"), "utf8");
    const simulate = api.slice(api.indexOf("\n### POST /v1/simulate\n"), api.indexOf("\n### POST /api/simulate\n"));
    expect(simulate).toMatch(/\| `verified` \| boolean \| yes \| false on every result the service sends: it does not vouch for its own answer\./);
  });
});
