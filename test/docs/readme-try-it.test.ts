// The README's shell snippets, run literally: as they stand in README.md, in `sh -e` against a
// fresh service, from a folder of their own below the repository root (npm finds the root; the
// CLI finds the files where the caller stands). "Try it" alone, to a checked proof; then every
// snippet top to bottom in one shell, except the few named in NOT_RUN with the reason a test
// cannot run them. Only WARDEN_URL (and DATA_DIR, for the operator's commands) is set from
// outside, as the snippets allow.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { userInfo } from "node:os";
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

/**
 * README.md's shell snippets that a test cannot run, each by the start of its first line, and why.
 * Every other shell snippet runs in the test below; a snippet neither run nor listed fails it.
 */
const NOT_RUN: { first: string; why: string }[] = [
  // Quick start: `npm ci` and starting the service (this test starts its own) and the whole suite.
  { first: "npm ci && npm start", why: "installs, starts the service, runs the whole suite" },
  // The whole suite on PostgreSQL: what CI runs (`bash .ci/run`), not a step of a reader's tour.
  { first: "TEST_DATABASE_URL=postgres://", why: "runs the whole suite" },
  // The whole suite on a Citus cluster: CI's third stage.
  { first: "scripts/citus.sh start", why: "starts a Citus cluster and runs the whole suite on it" },
  // The single binary and Deno: CI's smoke tests build and start both.
  { first: "npm run build && ./dist/warden serve", why: "builds and starts the service" },
  // MCP: starts the service, then the MCP Inspector, an interactive tool (test/mcp covers the gateway).
  { first: "npm start &", why: "starts the service and an interactive tool" },
  // psql against the PostgreSQL server the service runs on; test/plans/ops-scripts.test.ts runs these files with psql.
  { first: 'psql "$DATABASE_URL"', why: "needs the service on a PostgreSQL server" },
];

/** README.md's fenced blocks, in order: each one's language, text and section heading. */
function fencedBlocks(): { lang: string; section: string; text: string }[] {
  const blocks: { lang: string; section: string; text: string }[] = [];
  let section = "";
  let open: { lang: string; section: string; lines: string[] } | undefined;
  for (const line of readFileSync(join(ROOT, "README.md"), "utf8").split("\n")) {
    if (open) {
      if (line === "```") {
        blocks.push({ lang: open.lang, section: open.section, text: open.lines.map((l) => l + "\n").join("") });
        open = undefined;
      } else open.lines.push(line);
    } else if (line.startsWith("```")) open = { lang: line.slice(3).trim(), section, lines: [] };
    else if (line.startsWith("## ")) section = line.slice(3);
  }
  return blocks;
}

/** README.md's shell snippets (fences sh, bash, shell), in order. */
const shellSnippets = () => fencedBlocks().filter((b) => ["sh", "bash", "shell"].includes(b.lang));

const listed = (text: string) => NOT_RUN.filter((n) => text.startsWith(n.first));

describe("README: every shell snippet", () => {
  test("each is run below or named in NOT_RUN, and each entry of NOT_RUN names one snippet", () => {
    const snippets = shellSnippets();
    expect(snippets.length).toBeGreaterThan(NOT_RUN.length);
    for (const n of NOT_RUN) expect({ first: n.first, snippets: snippets.filter((s) => s.text.startsWith(n.first)).length }).toEqual({ first: n.first, snippets: 1 });
    // Shell in a fence of no language, or of another one, would escape this test.
    expect(fencedBlocks().map((b) => b.lang).filter((lang) => !["sh", "bash", "shell", "ts", "js", "json", "yaml"].includes(lang))).toEqual([]);
  });

  test("the others run literally, top to bottom, in one sh -e: signup to proof, an agent's key, approvals, an operator's reviews", async () => {
    // A service and a reader of their own: the snippets sign up the README's email, and the
    // operator's commands reach this service through its DATA_DIR (./data on the default set-up).
    const own = join(dir, "whole");
    const reader = join(own, "reader");
    mkdirSync(reader, { recursive: true });
    // The reader stands in the repository root, where the operator's script files are.
    symlinkSync(join(ROOT, "sql"), join(reader, "sql"));
    const service = await serve(testConfig({ port: 0, dataDir: join(own, "data"), databaseUrl: undefined }), { log: createLogger("silent") });
    try {
      const run = shellSnippets().filter((s) => listed(s.text).length === 0);
      expect(run.map((s) => s.section)).toEqual(["Try it", "Try it", "Try it", "Keys for agents", "Approvals", "Operators"]);
      const env: Record<string, string> = {};
      for (const [name, value] of Object.entries(process.env)) {
        if (value !== undefined && !name.startsWith("npm_") && !name.startsWith("WARDEN_") && name !== "INIT_CWD") env[name] = value;
      }
      env.WARDEN_URL = service.url;
      env.DATA_DIR = join(own, "data");
      // A login shell has it; the operator's scripts name the reviewer with it.
      env.USER ??= userInfo().username;
      const child = Bun.spawn(["sh", "-e", "-c", run.map((s) => s.text).join("\n")], { cwd: reader, env, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("error")), last: code === 0 ? "" : `${stdout.slice(-1500)}\n${stderr.slice(-600)}` }).toEqual({ code: 0, errors: [], last: "" });

      const read = (name: string) => JSON.parse(readFileSync(join(reader, name), "utf8"));
      // What the snippets left, read back as the customer: the operator ended the snippets' session, so a new one.
      const login = await (await fetch(`${service.url}/auth/login`, { ...insecure, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "you@example.com", password: "a long passphrase" }) })).json();
      const get = async (path: string) => (await fetch(`${service.url}${path}`, { ...insecure, headers: { authorization: `Bearer ${login.token}` } })).json();
      // Keys for agents: the agent's key made, held to what it needs, rotated.
      const agentKey = read("agent-key.json") as { key_id: string; secret: string };
      expect([agentKey.key_id.slice(0, 4), agentKey.secret.slice(0, 12)]).toEqual(["key_", "warden_live_"]);
      const keys = (await get("/customer/keys?limit=100")).keys as { key_id: string; status: string; actions: string[] | null; metadata: unknown; overlap_until: string | null }[];
      const made = keys.find((k) => k.key_id === agentKey.key_id);
      expect(made && { status: made.status, actions: made.actions, metadata: made.metadata, overlap: made.overlap_until !== null }).toEqual({ status: "revoked", actions: ["document.*"], metadata: { agent: "reader" }, overlap: true });
      const trail = (await get("/customer/audit?limit=100")).events as { event: string; target: { key_id?: string } }[];
      expect(trail.some((e) => e.event === "key.rotated" && e.target.key_id === agentKey.key_id)).toBe(true);
      // Approvals: held, approved, its outcome executed.
      expect(read("held.json")).toMatchObject({ decision: "DENIED", approval: { status: "pending" } });
      expect(read("approval.json")).toMatchObject({ status: "approved", outcome_receipt_id: expect.stringMatching(/^rcpt_/) });
      const receipts = (await get("/customer/receipts?limit=100")).receipts as { kind: string; protect_receipt_id: string | null }[];
      expect(receipts.filter((r) => r.kind === "execute").map((r) => r.protect_receipt_id)).toEqual([read("approval.json").outcome_receipt_id]);
      // Operators: the first request rejected, the second approved, the backup taken where the operator stands.
      const upgrades = (await get("/customer/upgrades")).upgrades as { requested_plan: string; status: string }[];
      expect(upgrades.filter((u) => u.requested_plan === "enterprise").map((u) => u.status).sort()).toEqual(["approved", "rejected"]);
      expect(trail.filter((e) => e.event.startsWith("feature.")).map((e) => e.event)).toEqual(["feature.revoked", "feature.granted"]);
      expect(existsSync(join(reader, "warden-backup.tar.gz"))).toBe(true);
    } finally {
      await service.stop();
    }
  }, 2 * SLOW);
});

describe("docs/api.md: verified", () => {
  test("says what verified means on the results the service sends", () => {
    const api = readFileSync(join(ROOT, "docs", "api.md"), "utf8");
    const simulate = api.slice(api.indexOf("\n### POST /v1/simulate\n"), api.indexOf("\n### POST /api/simulate\n"));
    expect(simulate).toMatch(/\| `verified` \| boolean \| yes \| false on every result the service sends: it does not vouch for its own answer\./);
  });
});
