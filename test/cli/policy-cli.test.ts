// `warden policy ...` as a user (or a customer's CI) runs it: a child process; `test` offline, the
// others against a real HTTPS server in this process.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../src/app/server.ts";
import { diffPolicies } from "../../src/policies/diff.ts";
import { DEFAULT_POLICY } from "../../src/decide/policy.ts";
import { GOOD_PASSWORD, openTestDb, testConfig, uniqueEmail } from "../helpers/service.ts";
import { runCli } from "../helpers/cli.ts";
import { planSetAsApproved, testQuery } from "../helpers/sql.ts";

const SLOW = 60_000;
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

let dir: string;
let url: string;
let token: string;
let apiKey: string;
let stop: (() => Promise<void>) | undefined;

const PAYMENTS = {
  default_effect: "deny",
  default_reason: "closed",
  rules: [{ id: "small-payments", effect: "allow", reason: "small_ok", when: { actions: ["payment.*"], amount: { lte: 100 } } }],
};
const CASES = [
  { name: "small", input: { action: "payment.send", amount: 5 }, expect: { decision: "ALLOWED", rule: "small-payments" } },
  { name: "large", input: { action: "payment.send", amount: 500 }, expect: { decision: "DENIED", reason: "closed" } },
];

async function post(path: string, json: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, { ...insecure, method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(json) });
  return (await res.json()) as Record<string, any>;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-policy-cli-"));
  const db = await openTestDb();
  const started = await serve(testConfig({ port: 0, dataDir: join(dir, "data"), logLevel: "warn" }), { db });
  stop = started.stop;
  url = started.url;
  const signup = await post("/auth/signup", { email: uniqueEmail("policy-cli"), password: GOOD_PASSWORD });
  token = signup.token;
  apiKey = signup.api_key;
  await planSetAsApproved(db, signup.tenant_id, "pro");
  // Two stored decisions for impact: a payment the draft would deny, a shell command it denies for another reason.
  await post("/v1/protect", { action: "payment.send", amount: 250, currency: "USD" }, { "x-api-key": apiKey });
  await post("/v1/protect", { action: "shell.exec" }, { "x-api-key": apiKey });
}, SLOW);

afterAll(async () => {
  await stop?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, SLOW);

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(["policy", ...args], { WARDEN_URL: url, WARDEN_INSECURE: "1", WARDEN_TOKEN: token, ...env });

function file(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

describe("warden policy test (offline)", () => {
  test("all cases pass: exit 0 with the results", async () => {
    // No server needed: an unreachable URL changes nothing.
    const run = await cli(["test", file("p.json", PAYMENTS), file("c.json", CASES)], { WARDEN_URL: "https://127.0.0.1:1" });
    expect(run.code).toBe(0);
    expect(run.json).toEqual({
      ok: true,
      passed: 2,
      failed: 0,
      results: [
        { name: "small", passed: true, decision: "ALLOWED", reason: "small_ok", rule: "small-payments" },
        { name: "large", passed: true, decision: "DENIED", reason: "closed", rule: null },
      ],
    });
  }, SLOW);

  test("a failing case: exit 1; {cases} and {document} wrappers are read too", async () => {
    const cases = { cases: [...CASES, { name: "wrong", input: { action: "payment.send", amount: 500 }, expect: { decision: "ALLOWED" } }] };
    const run = await cli(["test", file("wrapped.json", { ok: true, version: 2, document: PAYMENTS }), file("c2.json", cases)]);
    expect(run.code).toBe(1);
    expect(run.json).toMatchObject({ ok: false, passed: 2, failed: 1 });
    expect(run.json.results[2]).toEqual({ name: "wrong", passed: false, decision: "DENIED", reason: "closed", rule: null });
  }, SLOW);

  test("an invalid document or case: exit 2 naming the file and JSON path", async () => {
    const bad = { ...PAYMENTS, rules: [{ ...PAYMENTS.rules[0], when: { amount: { lte: "100" } } }] };
    const policy = await cli(["test", file("bad.json", bad), file("c3.json", CASES)]);
    expect(policy.code).toBe(2);
    expect(policy.stderr).toContain("bad.json: /rules/0/when/amount/lte");
    const cases = await cli(["test", file("p2.json", PAYMENTS), file("badcases.json", [{ ...CASES[0], expect: { decision: "YES" } }])]);
    expect(cases.code).toBe(2);
    expect(cases.stderr).toContain("badcases.json: /0/expect/decision");
    const notJson = await cli(["test", file("nj.json", "{nope"), file("c4.json", CASES)]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain("nj.json: not JSON");
  }, SLOW);

  test("cases with entities decide offline over their attributes; an undeclared attribute: exit 2 at its path", async () => {
    const doc = {
      default_effect: "deny",
      default_reason: "closed",
      entities: { subject: { attributes: { roles: { type: "list" } } } },
      rules: [{ id: "admins", effect: "allow", reason: "admin", when: { where: { "subject.attr.roles": { contains: "admin" } } } }],
    };
    const input = { action: "todo.update", context: { "subject.type": "user", "subject.id": "rick" } };
    const cases = [
      { name: "rick", input, entities: [{ type: "user", id: "rick", attributes: { roles: ["admin"] } }], expect: { decision: "ALLOWED", rule: "admins" } },
      { name: "nobody", input, expect: { decision: "DENIED" } },
    ];
    const run = await cli(["test", file("e.json", doc), file("ec.json", cases)]);
    expect([run.code, run.json?.passed]).toEqual([0, 2]);
    const undeclared = { ...doc, entities: { subject: { attributes: {} } } };
    const bad = await cli(["test", file("eu.json", undeclared), file("ec2.json", cases)]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("eu.json: /rules/0/when/where/subject.attr.roles: subject.attr.roles is not declared");
  }, SLOW);

  test("bad usage: exit 2", async () => {
    for (const args of [["test"], ["test", "only-one.json"], ["nope"], [], ["test", "a", "b", "--limit", "3"]]) {
      expect([args, (await cli(args)).code]).toEqual([args, 2]);
    }
  }, SLOW);
});

describe("warden policy publish, impact, diff (against the service)", () => {
  test("impact reports what a draft would change, nothing stored", async () => {
    const run = await cli(["impact", file("impact.json", PAYMENTS), "--limit", "10"]);
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({ ok: true, evaluated: 2, changed: 2, unchanged: 0, allowed_to_denied: 1, denied_to_allowed: 0 });
    expect((await cli(["impact", file("i2.json", PAYMENTS), "--limit", "0"])).code).toBe(2);
  }, SLOW);

  test("publish makes a new version; without a token: exit 2; a bad token: exit 1", async () => {
    const run = await cli(["publish", file("pub.json", PAYMENTS)]);
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({ ok: true, version: 2, document: PAYMENTS });
    expect((await cli(["publish", file("pub2.json", PAYMENTS)], { WARDEN_TOKEN: "" })).code).toBe(2);
    const refused = await cli(["publish", file("pub3.json", PAYMENTS)], { WARDEN_TOKEN: "not.a.jwt" });
    expect(refused.code).toBe(1);
    expect(refused.json).toMatchObject({ ok: false, error: "unauthorized" });
  }, SLOW);

  test("diff of two versions, or a version and a file: exit 1 when they differ, 0 when the same", async () => {
    const run = await cli(["diff", "1", "2"]);
    expect(run.code).toBe(1);
    expect(run.json.a).toMatchObject({ version: 1 });
    expect(run.json.b).toMatchObject({ version: 2 });
    expect(run.json.added).toEqual(["small-payments"]);
    expect(run.json.removed).toEqual(DEFAULT_POLICY.rules.map((r) => r.id));
    const same = await cli(["diff", "2", file("same.json", PAYMENTS)]);
    expect(same.code).toBe(0);
    expect(same.json).toMatchObject({ ok: true, same: true, b: { file: join(dir, "same.json") } });
    const missing = await cli(["diff", "1", "99"]);
    expect(missing.code).toBe(1);
    expect(missing.json).toMatchObject({ ok: false, error: "not_found" });
  }, SLOW);
});

describe("diffPolicies", () => {
  const rule = (id: string, reason = id) => ({ id, effect: "allow" as const, reason, when: {} });
  const doc = (rules: ReturnType<typeof rule>[], reason = "d") => ({ default_effect: "deny" as const, default_reason: reason, rules });

  test("added, removed, changed, reordered and the default", () => {
    const d = diffPolicies(doc([rule("a"), rule("b"), rule("c")]), doc([rule("c"), rule("b", "new"), rule("d")], "e"));
    expect(d).toEqual({
      default: { before: { effect: "deny", reason: "d" }, after: { effect: "deny", reason: "e" } },
      added: ["d"],
      removed: ["a"],
      changed: ["b"],
      reordered: true,
      same: false,
    });
    expect(diffPolicies(doc([rule("a")]), doc([rule("a")]))).toMatchObject({ same: true, reordered: false, default: null });
  });
});
