// The client half of the CLI: calls a running warden and checks results offline.
import { readFile } from "node:fs/promises";
import { verifyResult } from "../receipts/verify.ts";
import { insecureFetchInit, readStdin } from "../runtime.ts";

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
    return 0;
  }
  const outcome = await verifyResult(result, await fetchJwks());
  if (outcome.verified) {
    print({ ...result, verified: true });
    return 0;
  }
  print({ ...result, ok: false, verified: false, error: "receipt_mismatch", checks: outcome.checks });
  return 1;
}

export async function runVerify(opts: { file: string; jwksFile?: string }): Promise<number> {
  const text = opts.file === "-" ? await readStdin() : await readFile(opts.file, "utf8");
  let result: unknown;
  try {
    result = JSON.parse(text);
  } catch {
    print({ ok: false, verified: false, error: "invalid_json", checks: { content_hash: false, signature: false } });
    return 1;
  }
  const jwks = opts.jwksFile ? (JSON.parse(await readFile(opts.jwksFile, "utf8")) as { keys: JsonWebKey[] }) : await fetchJwks();
  const outcome = await verifyResult(result, jwks);
  print({ ok: outcome.verified, verified: outcome.verified, checks: outcome.checks, ...(outcome.verified ? {} : { error: "receipt_mismatch" }) });
  return outcome.verified ? 0 : 1;
}
