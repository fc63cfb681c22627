// The decision of a result made again offline, given the policy document its payload names
// (`warden verify FILE --policy FILE`, the SDK's verifyResult() with `policy`): as POST /v1/verify
// makes it, from the payload alone (src/decide/again.ts), on web-standard APIs only.
import { decideAgain } from "../decide/again.ts";
import { policyHash, type PolicyDocument } from "../decide/policy.ts";

type Fields = Record<string, unknown>;
const isObject = (v: unknown): v is Fields => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * The document must be the version the payload names (its hash), and deciding again from the
 * payload must give its decision, reasons, rule and reads. An execute of an approved action is
 * ALLOWED on its approval's outcome, which `warden verify --proof` of the approval bundle checks.
 * Never throws: a result read from a file may be anything.
 */
export async function decisionHoldsOffline(result: unknown, policy: PolicyDocument): Promise<boolean> {
  try {
    if (!isObject(result) || !isObject(result.payload) || !isObject(result.payload.policy)) return false;
    if (result.payload.policy.hash !== (await policyHash(policy))) return false;
    const again = decideAgain(result.payload, policy);
    if (!again?.matches) return false;
    const expected = result.payload.outcome !== undefined && again.heldForApproval ? "ALLOWED" : again.decision;
    return result.payload.decision === expected && result.decision === expected;
  } catch {
    return false;
  }
}
