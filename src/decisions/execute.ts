// POST /v1/execute: binds an ALLOWED protect receipt (within the execute window, of this tenant) to
// its execution, once. The database decides every refusal (receipt_append()): WR002 -> 404,
// WR003 -> 403 decision_denied, WR004 -> 400 token_expired, WR007 -> 409 already_executed.
import type { Queryable } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import type { Outcome } from "../http/idempotency.ts";
import type { KeyPrincipal } from "../keys/authenticate.ts";
import { assertActionAllowed } from "../keys/rules.ts";
import { getReceiptRow, type DecisionReceiptView } from "../receipts/store.ts";
import { buildPayload, type ResultPayload } from "../decide/payload.ts";
import type { OutcomePayload } from "../receipts/approval-payload.ts";
import { recordDecision, type Recording } from "./record.ts";

/**
 * The decision an execute carries: a protect receipt of the tenant as stored, or an approval's
 * outcome receipt, which carries the protect it approved with the approval named (404 when there
 * is neither). Whether it may be executed (ALLOWED, in time, once) is receipt_append()'s check.
 */
async function storedProtect(db: Queryable, tenantId: string, receiptId: string): Promise<ResultPayload> {
  const row = await getReceiptRow(db, tenantId, receiptId);
  if (row?.kind === "protect") return JSON.parse(row.payload) as ResultPayload;
  if (row?.kind === "approval") {
    const outcome = JSON.parse(row.payload) as OutcomePayload;
    const asked = await getReceiptRow(db, tenantId, outcome.protect_receipt_id);
    if (asked?.kind !== "protect") throw new AppError("not_found", "No protect receipt with this id.");
    const protect = JSON.parse(asked.payload) as ResultPayload;
    // Approved: the action goes ahead as approved; any other outcome stays DENIED (403 on execute).
    return { ...protect, decision: row.decision, outcome: { approval_id: outcome.outcome.approval_id, receipt_id: row.receipt_id } };
  }
  throw new AppError("not_found", "No protect receipt with this id.");
}

export async function execute(deps: Recording, principal: KeyPrincipal, protectReceiptId: string, requestId: string): Promise<Outcome> {
  const decided = deps.receipts.issuedProtect(principal.tenant_id, protectReceiptId) ?? (await storedProtect(deps.db, principal.tenant_id, protectReceiptId));
  // A key limited to some actions executes only those (docs/api.md, "Keys for agents").
  if (principal.rules !== null) assertActionAllowed(principal.rules, decided.input.action);
  return recordDecision(deps, { tenantId: principal.tenant_id, keyId: principal.key_id, requestId, payload: executePayload(decided), protectReceiptId }, executedBody);
}

/** The execution carries the decision it executes: same input, policy version, reasons, rule and principal. */
export function executePayload(decided: ResultPayload): ResultPayload {
  const { input, policy, decision, reasons, rule, requires_approval, outcome } = decided;
  return buildPayload({ kind: "execute", input, policy, decision, reasons, rule, principal: decided.principal, requires_approval, outcome });
}

/** POST /v1/execute's answer around the stored receipt. */
export const executedBody = (receipt: DecisionReceiptView) => ({ ok: true, executed: true, verified: false, ...receipt });
