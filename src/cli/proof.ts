// `warden proof RECEIPT`: the bundle that `warden verify --proof` checks offline, fetched with
// WARDEN_TOKEN: the stored receipt, the signed checkpoint, and the receipt's inclusion proof at
// that checkpoint's size.
import { callService } from "./client.ts";
import { CliError, describeErrorBody, readJsonInput } from "./inputs.ts";

const RECEIPT_ID = /^rcpt_[A-Za-z0-9]+$/;

/** The receipt a saved protect or execute result (or GET /customer/receipts/{id} body) names. */
function receiptIdIn(value: unknown, file: string): string {
  const fields = (value ?? {}) as Record<string, unknown>;
  const receipt = (typeof fields.receipt === "object" && fields.receipt !== null ? fields.receipt : fields) as Record<string, unknown>;
  if (typeof receipt.receipt_id === "string" && RECEIPT_ID.test(receipt.receipt_id)) return receipt.receipt_id;
  if (fields.ok === false && typeof fields.error === "string") throw new CliError(`${file} is an error the service answered, not a decision: ${describeErrorBody(fields)}`, 2);
  if (receipt.kind === "simulation") throw new CliError(`${file} is a simulation: simulations are not stored in the log, so none has a proof (warden protect makes a stored decision)`, 2);
  throw new CliError(`${file} names no receipt: it has no receipt_id (save what warden protect prints)`, 2);
}

export async function runProof(arg: string): Promise<number> {
  const receiptId = RECEIPT_ID.test(arg) ? arg : receiptIdIn(await readJsonInput(arg), arg === "-" ? "stdin" : arg);
  const base = "/customer/receipts";
  const checkpoint = await callService("GET", `${base}/checkpoint`, { auth: "token" });
  const { receipt } = await callService("GET", `${base}/${receiptId}`, { auth: "token" });
  const proof = await callService("GET", `${base}/${receiptId}/proof?tree_size=${checkpoint.tree_size}`, { auth: "token" });
  console.log(JSON.stringify({ receipt, proof, checkpoint }, null, 2));
  return 0;
}
