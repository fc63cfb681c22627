// `warden verify --proof FILE`: a receipt's inclusion in a signed checkpoint, checked offline; or
// an approval's bundle: who approved what, under which terms, all in the log (src/approvals/bundle.ts).
import { isApprovalBundle, verifyApprovalBundle } from "../approvals/bundle.ts";
import { verifyProofBundle } from "../receipts/proof-bundle.ts";
import { loadJwks } from "./client.ts";
import { CliError, notABundle, readJsonInput } from "./inputs.ts";

export async function runVerifyProof(opts: { file: string; jwksFile?: string }): Promise<number> {
  const bundle = await readJsonInput(opts.file);
  // An approval's bundle (GET /customer/approvals/{id}/bundle): its receipts, their proofs, one checkpoint.
  if (isApprovalBundle(bundle)) {
    const { verified, checks, approval_id, status, approvers } = await verifyApprovalBundle(bundle, await loadJwks(opts.jwksFile));
    console.log(JSON.stringify({ ok: verified, verified, approval_id, status, approvers, checks, ...(verified ? {} : { error: "proof_mismatch" }) }, null, 2));
    return verified ? 0 : 1;
  }
  const what = notABundle(bundle);
  if (what) throw new CliError(`${opts.file === "-" ? "stdin" : opts.file} is ${what}`, 2);
  const { verified, checks } = await verifyProofBundle(bundle, await loadJwks(opts.jwksFile));
  console.log(JSON.stringify({ ok: verified, verified, checks, ...(verified ? {} : { error: "proof_mismatch" }) }, null, 2));
  return verified ? 0 : 1;
}
