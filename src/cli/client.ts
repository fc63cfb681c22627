// The client half of the CLI: calls a running warden and checks results offline.
import { Value } from "@sinclair/typebox/value";
import { PolicyDocument } from "../decide/policy.ts";
import { verifyResult } from "../receipts/verify.ts";
import { decisionHoldsOffline } from "../receipts/verify-decision.ts";
import { insecureFetchInit } from "../runtime.ts";
import { CliError, describeErrorBody, notAResult, readJsonInput } from "./inputs.ts";

export function serverUrl(): string {
  return (process.env.WARDEN_URL || "https://127.0.0.1:8443").replace(/\/+$/, "");
}

// WARDEN_INSECURE=1 accepts the self-signed development certificate.
export function fetchOptions(): RequestInit {
  return process.env.WARDEN_INSECURE === "1" ? insecureFetchInit() : {};
}

export async function fetchJwks(): Promise<{ keys: JsonWebKey[] }> {
  return (await callService("GET", "/.well-known/jwks.json", { auth: "none" })) as { keys: JsonWebKey[] };
}

/** What a call authenticates with: WARDEN_API_KEY (X-API-Key), WARDEN_TOKEN (a session), or nothing. */
type Auth = "api_key" | "token" | "none";

const CREDENTIALS = {
  api_key: { variable: "WARDEN_API_KEY", what: "an API key: the api_key that warden signup prints" },
  token: { variable: "WARDEN_TOKEN", what: "a session token: the token that warden signup (or POST /auth/login) answers, valid 24 hours" },
} as const;

/**
 * One call of the service: the answer's body when it succeeded. Anything else (no credential, the
 * service out of reach, an error body) is a CliError with one line that says what to do, so that
 * nothing but a real answer reaches stdout (and a file it is redirected to).
 */
export async function callService(method: string, path: string, opts: { auth: Auth; body?: unknown; requestId?: string }): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = {};
  const credential = opts.auth === "none" ? undefined : CREDENTIALS[opts.auth];
  if (credential) {
    const value = process.env[credential.variable];
    if (!value) throw new CliError(`set ${credential.variable} to ${credential.what}`, 2);
    headers[opts.auth === "api_key" ? "x-api-key" : "authorization"] = opts.auth === "api_key" ? value : `Bearer ${value}`;
  }
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (opts.requestId) headers["x-request-id"] = opts.requestId;
  let res: Response;
  try {
    res = await fetch(serverUrl() + path, { ...fetchOptions(), method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  } catch (err) {
    const reason = (err as Error).message;
    const certificate = /certificate|self[- ]signed|CERT/i.test(`${reason} ${(err as { code?: string }).code ?? ""}`);
    throw new CliError(`cannot reach ${serverUrl()} (WARDEN_URL): ${reason}${certificate && process.env.WARDEN_INSECURE !== "1" ? "; WARDEN_INSECURE=1 accepts the development certificate" : ""}`, 1);
  }
  let body: Record<string, unknown>;
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    throw new CliError(`${method} ${path} on ${serverUrl()}: HTTP ${res.status}, and not the JSON warden answers (is WARDEN_URL a warden?)`, 1);
  }
  if (res.ok && body.ok === true) return body;
  const hint = res.status === 401 && credential ? `; is ${credential.variable} ${credential.what}?` : "";
  throw new CliError(`the service refused ${method} ${path}: HTTP ${res.status} ${describeErrorBody(body)}${hint}`, 1);
}

function print(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

// `verified` means two things: the field the service sends (always false, docs/api.md) and the
// outcome of this command's own check. A line on stderr says which one the output shows.
const SERVED_VERIFIED_NOTE =
  'note: "verified": false is what the service sends on every result: it does not vouch for its own answer. Check it offline with warden verify FILE (or call with --verify).';
const OWN_CHECK_NOTE =
  'note: "verified" here is this command\'s own offline check (content_hash recomputed, signature checked against the JWKS), not the field the service sent, which is always false.';

export async function runSimulate(opts: { preset: string; requestId?: string; verify: boolean }): Promise<number> {
  const result = await callService("POST", "/v1/simulate", { auth: "api_key", body: { preset: opts.preset }, requestId: opts.requestId });
  if (!opts.verify) {
    print(result);
    console.error(SERVED_VERIFIED_NOTE);
    return 0;
  }
  const outcome = await verifyResult(result, await fetchJwks());
  console.error(OWN_CHECK_NOTE);
  if (outcome.verified) {
    print({ ...result, verified: true });
    return 0;
  }
  print({ ...result, ok: false, verified: false, error: "receipt_mismatch", checks: outcome.checks });
  return 1;
}

/** `warden protect`: a live decision under the active policy, stored as a receipt in the tenant's log. */
export async function runProtect(input: { action: string; resource?: string; amount?: number; currency?: string }, requestId?: string): Promise<number> {
  print(await callService("POST", "/v1/protect", { auth: "api_key", body: input, requestId }));
  console.error(SERVED_VERIFIED_NOTE);
  return 0;
}

/** A policy document from a file (--policy FILE): the document, or GET /customer/policy/versions/{version}'s answer holding it. */
async function loadPolicy(file: string): Promise<PolicyDocument> {
  const read = (await readJsonInput(file)) as { document?: unknown; rules?: unknown } | null;
  const document = read !== null && typeof read === "object" && read.rules === undefined && typeof read.document === "object" ? read.document : read;
  if (!Value.Check(PolicyDocument, document)) throw new CliError(`${file} is not a policy document (save GET /customer/policy/versions/{version})`, 2);
  return document;
}

/** A JWKS from a file (--jwks FILE), else the service's. */
export async function loadJwks(file: string | undefined): Promise<{ keys: JsonWebKey[] }> {
  if (file === undefined) return fetchJwks();
  const jwks = await readJsonInput(file);
  if (!Array.isArray((jwks as { keys?: unknown } | null)?.keys)) throw new CliError(`${file} is not a JWKS: it has no keys (save GET /.well-known/jwks.json)`, 2);
  return jwks as { keys: JsonWebKey[] };
}

export async function runVerify(opts: { file: string; jwksFile?: string; policyFile?: string }): Promise<number> {
  const input = await readJsonInput(opts.file);
  // GET /customer/receipts/{id} wraps the stored receipt: accept the wrapper too.
  const wrapped = input as { ok?: unknown; receipt?: unknown; payload?: unknown } | null;
  const result = wrapped?.ok === true && typeof wrapped.receipt === "object" && wrapped.payload === undefined ? wrapped.receipt : input;
  const what = notAResult(result);
  if (what) throw new CliError(`${opts.file === "-" ? "stdin" : opts.file} is ${what}`, 2);
  const policy = opts.policyFile === undefined ? undefined : await loadPolicy(opts.policyFile);
  const signed = await verifyResult(result, await loadJwks(opts.jwksFile));
  // With --policy, the decision too, made again from the payload alone (src/receipts/verify-decision.ts).
  const decision = policy === undefined ? undefined : await decisionHoldsOffline(result, policy);
  const checks = decision === undefined ? signed.checks : { ...signed.checks, decision };
  const verified = signed.verified && decision !== false;
  console.error(OWN_CHECK_NOTE);
  print({ ok: verified, verified, checks, ...(verified ? {} : { error: "receipt_mismatch" }) });
  return verified ? 0 : 1;
}
