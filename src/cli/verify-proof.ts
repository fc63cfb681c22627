// `warden verify --proof FILE`: a receipt's inclusion in a signed checkpoint, checked offline.
import { verifyProofBundle } from "../receipts/proof-bundle.ts";
import { loadJwks } from "./client.ts";
import { CliError, notABundle, readJsonInput } from "./inputs.ts";

export async function runVerifyProof(opts: { file: string; jwksFile?: string }): Promise<number> {
  const bundle = await readJsonInput(opts.file);
  const what = notABundle(bundle);
  if (what) throw new CliError(`${opts.file === "-" ? "stdin" : opts.file} is ${what}`, 2);
  const { verified, checks } = await verifyProofBundle(bundle, await loadJwks(opts.jwksFile));
  console.log(JSON.stringify({ ok: verified, verified, checks, ...(verified ? {} : { error: "proof_mismatch" }) }, null, 2));
  return verified ? 0 : 1;
}
