// `warden verify --proof FILE`: a receipt's inclusion in a signed checkpoint, checked offline.
import { readFile } from "node:fs/promises";
import { verifyProofBundle } from "../receipts/proof-bundle.ts";
import { fetchJwks } from "./client.ts";
import { readStdin } from "../runtime.ts";

export async function runVerifyProof(opts: { file: string; jwksFile?: string }): Promise<number> {
  const text = opts.file === "-" ? await readStdin() : await readFile(opts.file, "utf8");
  let bundle: unknown;
  try {
    bundle = JSON.parse(text);
  } catch {
    bundle = undefined;
  }
  const jwks = opts.jwksFile ? (JSON.parse(await readFile(opts.jwksFile, "utf8")) as { keys: JsonWebKey[] }) : await fetchJwks();
  const { verified, checks } = await verifyProofBundle(bundle, jwks);
  console.log(JSON.stringify({ ok: verified, verified, checks, ...(verified ? {} : { error: bundle === undefined ? "invalid_json" : "proof_mismatch" }) }, null, 2));
  return verified ? 0 : 1;
}
