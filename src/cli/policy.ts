// `warden policy test|impact|publish|diff` (README, Command line; docs/policy.md). `test` runs offline with the
// service's own engine; the others call WARDEN_URL with WARDEN_TOKEN (a session JWT).
import { readFile } from "node:fs/promises";
import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "@sinclair/typebox";
import { parseArgs } from "node:util";
import { documentProblem, PolicyDocument } from "../decide/policy.ts";
import { TestCases, type TestCase } from "../policies/model.ts";
import { runCases } from "../policies/testing.ts";
import { diffPolicies } from "../policies/diff.ts";
import { fetchOptions, serverUrl } from "./client.ts";
import type { UsageLine } from "./usage.ts";
import { callerPath } from "./inputs.ts";

export const POLICY_LINES: UsageLine[] = [
  { synopsis: "policy test POLICY.json CASES.json", summary: "run test cases offline (exit 0 all pass, 1 a case fails)" },
  { synopsis: "policy impact POLICY.json [--limit N]", summary: "what the draft would change on your latest protect receipts (with WARDEN_TOKEN)" },
  { synopsis: "policy publish POLICY.json", summary: "publish as a new version once your stored tests pass (with WARDEN_TOKEN)" },
  { synopsis: "policy diff A B", summary: "rules added, removed, changed between two files or versions (a number, with WARDEN_TOKEN); exit 0 the same, 1 different" },
];

/** Bad usage or an invalid document: exit 2 with the message. */
export class PolicyUsageError extends Error {}

function print(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/** The value if it fits the schema; otherwise a usage error naming the file and the JSON path. */
function checked<T>(schema: TSchema, value: unknown, where: string): T {
  const first = Value.Errors(schema, value).First();
  if (first) throw new PolicyUsageError(`${where}${first.path || "/"}: ${first.message}`);
  return value as T;
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(callerPath(file), "utf8");
  } catch (err) {
    throw new PolicyUsageError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new PolicyUsageError(`${file}: not JSON (${(err as Error).message})`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A policy file: a bare document, or a response that holds one (GET /customer/policy, a version). */
async function readPolicy(file: string): Promise<PolicyDocument> {
  const json = await readJson(file);
  const document = isObject(json) && "document" in json ? json.document : json;
  const where = `${file}: ${document === json ? "" : "document"}`;
  const valid = checked<PolicyDocument>(PolicyDocument, document, where);
  // What the schema cannot say (an undeclared attribute, a usage condition with no bound, ...), refused as the service refuses it.
  const problem = documentProblem(valid);
  if (problem) throw new PolicyUsageError(`${where}/${problem.path}: ${problem.message}`);
  return valid;
}

/** A cases file: an array of cases, or `{cases}` as GET /customer/policy/tests answers. */
async function readCases(file: string): Promise<TestCase[]> {
  const json = await readJson(file);
  const cases = isObject(json) && "cases" in json ? json.cases : json;
  return checked<TestCase[]>(TestCases, cases, `${file}: ${cases === json ? "" : "cases"}`);
}

/** Calls the service with the session token; prints the body; exit 0 on success, 1 otherwise. */
async function request(method: string, path: string, body?: unknown): Promise<{ code: number; body: Record<string, unknown> }> {
  const token = process.env.WARDEN_TOKEN;
  if (!token) throw new PolicyUsageError("set WARDEN_TOKEN to a session token (the token POST /auth/login returns)");
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${serverUrl()}${path}`, { ...fetchOptions(), method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const parsed = (await res.json()) as Record<string, unknown>;
  return { code: res.ok && parsed.ok === true ? 0 : 1, body: parsed };
}

/** A side of a diff: an all-digit argument is a version of your tenant, anything else a file. */
async function diffSide(arg: string): Promise<{ label: Record<string, unknown>; document: PolicyDocument } | { error: Record<string, unknown> }> {
  if (!/^[0-9]+$/.test(arg)) return { label: { file: arg }, document: await readPolicy(arg) };
  const reply = await request("GET", `/customer/policy/versions/${arg}`);
  if (reply.code !== 0) return { error: reply.body };
  return { label: { version: reply.body.version, hash: reply.body.hash }, document: reply.body.document as PolicyDocument };
}

export async function runPolicy(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, options: { limit: { type: "string" } }, strict: true, allowPositionals: true });
  const want = (n: number, shape: string) => {
    if (positionals.length !== n) throw new PolicyUsageError(`policy ${sub} needs ${shape}`);
  };
  if (values.limit !== undefined && sub !== "impact") throw new PolicyUsageError(`policy ${sub} takes no --limit`);
  switch (sub) {
    case "test": {
      want(2, "POLICY.json CASES.json");
      const [document, cases] = await Promise.all([readPolicy(positionals[0]), readCases(positionals[1])]);
      const run = runCases(document, cases);
      print({ ok: run.failed === 0, ...run });
      return run.failed === 0 ? 0 : 1;
    }
    case "impact": {
      want(1, "POLICY.json");
      const limit = values.limit === undefined ? undefined : Number(values.limit);
      if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 10_000)) throw new PolicyUsageError("--limit is an integer from 1 to 10000");
      const reply = await request("POST", "/customer/policy/impact", { document: await readPolicy(positionals[0]), limit });
      print(reply.body);
      return reply.code;
    }
    case "publish": {
      want(1, "POLICY.json");
      const reply = await request("PUT", "/customer/policy", { document: await readPolicy(positionals[0]) });
      print(reply.body);
      return reply.code;
    }
    case "diff": {
      want(2, "A B (each a version number or a policy file)");
      const [a, b] = await Promise.all(positionals.map(diffSide));
      if ("error" in a || "error" in b) {
        print("error" in a ? a.error : (b as { error: unknown }).error);
        return 1;
      }
      const diff = diffPolicies(a.document, b.document);
      print({ ok: true, a: a.label, b: b.label, ...diff });
      return diff.same ? 0 : 1;
    }
    default:
      throw new PolicyUsageError(sub === undefined ? "policy needs a command: test, impact, publish or diff" : `unknown policy command: ${sub}`);
  }
}
