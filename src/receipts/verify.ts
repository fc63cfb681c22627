import { canonicalJson, contentHash } from "../crypto/canonical.ts";
import { signedBeforeCompromise, verifyCanonical } from "../crypto/signature.ts";
import { claimsShown } from "./claims.ts";

export type VerifyOutcome = { verified: boolean; checks: { content_hash: boolean; signature: boolean } };

type Fields = Record<string, unknown>;

const isObject = (v: unknown): v is Fields => v !== null && typeof v === "object" && !Array.isArray(v);

// Offline re-check of a result exactly as the server sent it, needing only the JWKS. Results
// arrive from outside (files, request bodies), so any shape is possible and nothing may throw.
export async function verifyResult(result: unknown, jwks: { keys: JsonWebKey[] }): Promise<VerifyOutcome> {
  const checks = {
    content_hash: await checkContentHash(result),
    signature: await checkSignature(result, jwks),
  };
  return { verified: checks.content_hash && checks.signature, checks };
}

// The hash must describe the payload, and the decision shown must be the one hashed (an audit
// event shows none, and its payload holds none).
async function checkContentHash(result: unknown): Promise<boolean> {
  try {
    if (!isObject(result) || !isObject(result.payload) || typeof result.content_hash !== "string") return false;
    if ((result.decision ?? null) !== (result.payload.decision ?? null)) return false;
    return (await contentHash(result.payload)) === result.content_hash;
  } catch {
    return false;
  }
}

// The signature must cover exactly the claims the result shows (receipt and tenant, key, kind,
// request, time, content_hash, executed protect), by a key not compromised at the signed time;
// the kind shown must be the one hashed.
async function checkSignature(result: unknown, jwks: { keys: JsonWebKey[] }): Promise<boolean> {
  try {
    if (!isObject(result) || !isObject(result.payload) || typeof result.signature !== "string") return false;
    const shown = claimsShown(result);
    if (!shown || shown.kind !== result.payload.kind) return false;
    const signed = await verifyCanonical(result.signature, jwks);
    if (!signed.valid || canonicalJson(signed.payload) !== canonicalJson(shown)) return false;
    return signedBeforeCompromise(signed.compromised_since, shown.timestamp);
  } catch {
    return false;
  }
}
