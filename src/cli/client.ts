// The client half of the CLI: calls a running warden and checks results offline.
import { verifyResult } from "../receipts/verify.ts";
import { insecureFetchInit } from "../runtime.ts";
import { CliError, notAResult, readJsonInput } from "./inputs.ts";

export function serverUrl(): string {
  return (process.env.WARDEN_URL || "https://127.0.0.1:8443").replace(/\/+$/, "");
}

// WARDEN_INSECURE=1 accepts the self-signed development certificate.
export function fetchOptions(): RequestInit {
  return process.env.WARDEN_INSECURE === "1" ? insecureFetchInit() : {};
}

export async function fetchJwks(): Promise<{ keys: JsonWebKey[] }> {
  const res = await fetch(`${serverUrl()}/.well-known/jwks.json`, fetchOptions());
  if (!res.ok) throw new Error(`could not fetch the JWKS from ${serverUrl()}: HTTP ${res.status}`);
  return (await res.json()) as { keys: JsonWebKey[] };
}

function print(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

// `verified` means two things: the field the service sends (always false, docs/api.md) and the
// outcome of this command's own check. A line on stderr says which one the output shows.
export const SERVED_VERIFIED_NOTE =
  'note: "verified": false is what the service sends on every result: it does not vouch for its own answer. Check it offline with warden verify FILE (or call with --verify).';
export const OWN_CHECK_NOTE =
  'note: "verified" here is this command\'s own offline check (content_hash recomputed, signature checked against the JWKS), not the field the service sent, which is always false.';

export async function runSimulate(opts: { preset: string; requestId?: string; verify: boolean }): Promise<number> {
  const key = process.env.WARDEN_API_KEY;
  if (!key) {
    print({ ok: false, error: "missing_api_key", message: "Set WARDEN_API_KEY." });
    return 2;
  }
  const headers: Record<string, string> = { "content-type": "application/json", "x-api-key": key };
  if (opts.requestId) headers["x-request-id"] = opts.requestId;
  const res = await fetch(`${serverUrl()}/v1/simulate`, { ...fetchOptions(), method: "POST", headers, body: JSON.stringify({ preset: opts.preset }) });
  const result = (await res.json()) as Record<string, unknown>;
  if (!res.ok || result.ok !== true) {
    print(result);
    return 1;
  }
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

/** A JWKS from a file (--jwks FILE), else the service's. */
export async function loadJwks(file: string | undefined): Promise<{ keys: JsonWebKey[] }> {
  if (file === undefined) return fetchJwks();
  const jwks = await readJsonInput(file);
  if (!Array.isArray((jwks as { keys?: unknown } | null)?.keys)) throw new CliError(`${file} is not a JWKS: it has no keys (save GET /.well-known/jwks.json)`, 2);
  return jwks as { keys: JsonWebKey[] };
}

export async function runVerify(opts: { file: string; jwksFile?: string }): Promise<number> {
  const input = await readJsonInput(opts.file);
  // GET /customer/receipts/{id} wraps the stored receipt: accept the wrapper too.
  const wrapped = input as { ok?: unknown; receipt?: unknown; payload?: unknown } | null;
  const result = wrapped?.ok === true && typeof wrapped.receipt === "object" && wrapped.payload === undefined ? wrapped.receipt : input;
  const what = notAResult(result);
  if (what) throw new CliError(`${opts.file === "-" ? "stdin" : opts.file} is ${what}`, 2);
  const outcome = await verifyResult(result, await loadJwks(opts.jwksFile));
  console.error(OWN_CHECK_NOTE);
  print({ ok: outcome.verified, verified: outcome.verified, checks: outcome.checks, ...(outcome.verified ? {} : { error: "receipt_mismatch" }) });
  return outcome.verified ? 0 : 1;
}
