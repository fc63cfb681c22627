// Offline check of a receipt's place in the log, needing only the JWKS (`warden verify --proof`).
// A bundle is {receipt, proof, checkpoint} exactly as GET /customer/receipts/{id},
// GET /customer/receipts/{id}/proof?tree_size=N and GET /customer/receipts/checkpoint return them
// (N = the checkpoint's tree_size). Input comes from files, so nothing here may throw.
// Hashing and signatures use WebCrypto only: the console runs this same check in the browser.
import { bytesToHex, canonicalJson, hexToBytes } from "../crypto/canonical.ts";
import { chainHash, isHash } from "./chain.ts";
import { claimsShown } from "./claims.ts";
import { leafHashAsync, verifyInclusionAsync } from "./inclusion.ts";
import { signedBeforeCompromise, verifyCanonical } from "../crypto/signature.ts";
import { verifyResult } from "./verify.ts";

export type ProofChecks = { content_hash: boolean; signature: boolean; chain_hash: boolean; inclusion: boolean; checkpoint: boolean };

type Fields = Record<string, unknown>;
const isObject = (v: unknown): v is Fields => v !== null && typeof v === "object" && !Array.isArray(v);

export async function verifyProofBundle(bundle: unknown, jwks: { keys: JsonWebKey[] }): Promise<{ verified: boolean; checks: ProofChecks }> {
  const b = isObject(bundle) ? bundle : {};
  // GET /customer/receipts/{id} wraps the receipt: accept the wrapper too.
  const receipt = isObject(b.receipt) && isObject(b.receipt.receipt) ? b.receipt.receipt : b.receipt;
  const { checks: signed } = await verifyResult(receipt, jwks);
  const checks: ProofChecks = {
    ...signed,
    chain_hash: await safely(() => chainHashHolds(receipt)),
    inclusion: await safely(async () => includes(receipt, b.proof, b.checkpoint)),
    checkpoint: await safely(() => checkpointSigned(receipt, b.checkpoint, jwks)),
  };
  return { verified: Object.values(checks).every(Boolean), checks };
}

async function safely(check: () => Promise<boolean>): Promise<boolean> {
  try {
    return await check();
  } catch {
    return false;
  }
}

// The leaf is bound to the receipt: chain_hash covers every claim the signature covers, plus prev and seq.
async function chainHashHolds(r: unknown): Promise<boolean> {
  if (!isObject(r) || !isHash(r.chain_hash) || !isHash(r.content_hash) || !(r.prev_hash === null || isHash(r.prev_hash))) return false;
  if (!Number.isSafeInteger(r.seq) || (r.seq as number) < 0 || (r.seq === 0) !== (r.prev_hash === null)) return false;
  const claims = claimsShown(r);
  if (!claims) return false;
  return (await chainHash({ ...claims, prev: r.prev_hash as string | null, seq: r.seq as number })) === r.chain_hash;
}

async function includes(r: unknown, proof: unknown, checkpoint: unknown): Promise<boolean> {
  if (!isObject(r) || !isObject(proof) || !isObject(checkpoint) || !isHash(r.chain_hash) || !isHash(checkpoint.root_hash)) return false;
  const { seq, tree_size, leaf_hash, path } = proof;
  if (seq !== r.seq || tree_size !== checkpoint.tree_size || typeof seq !== "number" || typeof tree_size !== "number") return false;
  if (!Array.isArray(path) || !path.every(isHash)) return false;
  const leaf = await leafHashAsync(hexToBytes(r.chain_hash));
  if (leaf_hash !== undefined && leaf_hash !== bytesToHex(leaf)) return false;
  return verifyInclusionAsync(seq, tree_size, leaf, path.map(hexToBytes), hexToBytes(checkpoint.root_hash));
}

// The tree head is the service's, for this receipt's tenant.
async function checkpointSigned(r: unknown, checkpoint: unknown, jwks: { keys: JsonWebKey[] }): Promise<boolean> {
  if (!isObject(r) || !isObject(checkpoint) || typeof checkpoint.signature !== "string") return false;
  const { valid, payload, compromised_since } = await verifyCanonical(checkpoint.signature, jwks);
  if (!valid || !signedBeforeCompromise(compromised_since, checkpoint.timestamp)) return false;
  const expected = { tenant_id: r.tenant_id, tree_size: checkpoint.tree_size, root_hash: checkpoint.root_hash, timestamp: checkpoint.timestamp };
  if ("tenant_id" in checkpoint && checkpoint.tenant_id !== r.tenant_id) return false;
  return typeof r.tenant_id === "string" && canonicalJson(payload) === canonicalJson(expected);
}
