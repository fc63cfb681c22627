import { canonicalJson, contentHash } from "../crypto/canonical.ts";
import { verifyCanonical } from "../crypto/signature.ts";

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

// The hash must describe the payload, and the decision shown must be the one hashed.
async function checkContentHash(result: unknown): Promise<boolean> {
  try {
    if (!isObject(result) || !isObject(result.payload) || typeof result.content_hash !== "string") return false;
    if (result.decision !== result.payload.decision) return false;
    return (await contentHash(result.payload)) === result.content_hash;
  } catch {
    return false;
  }
}

// The signature binds content_hash to this request, time and kind; without this, a valid
// signature could be replayed onto another result.
async function checkSignature(result: unknown, jwks: { keys: JsonWebKey[] }): Promise<boolean> {
  try {
    if (!isObject(result) || !isObject(result.payload) || typeof result.signature !== "string") return false;
    const { valid, payload: signed } = await verifyCanonical(result.signature, jwks);
    if (!valid || !isObject(signed)) return false;
    // Simulation results do not repeat tenant_id, so it is taken from the signed claims; when the
    // result does carry one, it has to agree.
    const tenantId = "tenant_id" in result ? result.tenant_id : signed.tenant_id;
    const expected = {
      content_hash: result.content_hash,
      request_id: result.request_id,
      tenant_id: tenantId,
      timestamp: result.timestamp,
      kind: result.payload.kind,
    };
    if (!Object.values(expected).every((v) => typeof v === "string")) return false;
    return canonicalJson(signed) === canonicalJson(expected);
  } catch {
    return false;
  }
}
