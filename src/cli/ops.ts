// `warden ops ...`: operator commands against DATABASE_URL, or the embedded database in
// DATA_DIR (which must not be in use by a running service: see src/db/pglite.ts).
import { loadConfig } from "../config.ts";
import { openDb } from "../db/index.ts";
import { migrate } from "../db/migrate.ts";
import { parseArgs } from "node:util";
import { DbError } from "../db/index.ts";
import { ReceiptSigner } from "../receipts/signer.ts";
import { parseReviewCommand, REVIEW_USAGE, ReviewUsageError, runOpsScript, runReviewCommand } from "./ops-review.ts";
import { RECEIPTS_USAGE, runReceiptsCheck } from "./ops-receipts.ts";

export class OpsUsageError extends Error {}

export const OPS_USAGE = `  ops signing-key rotate                  retire the receipt signing key and make a new one
  ops signing-key revoke KID --compromised-since TIME
                                          mark a signing key compromised since TIME (ISO 8601); its later signatures stop verifying
${REVIEW_USAGE}
${RECEIPTS_USAGE}`;

export async function runOps(args: string[]): Promise<number> {
  const [group, action, ...rest] = args;
  if (group === "signing-key" && action === "rotate" && rest.length === 0) {
    const config = loadConfig();
    const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    try {
      await migrate(db);
      await ReceiptSigner.open(db); // a database with no key yet gets its first one before rotation
      const kid = await ReceiptSigner.rotate(db);
      console.log(JSON.stringify({ ok: true, kid, note: "old keys stay in the JWKS; running instances switch within a minute" }));
      return 0;
    } finally {
      await db.close();
    }
  }
  if (group === "signing-key" && action === "revoke") return runSigningKeyRevoke(rest);
  if (group === "receipts" && action === "check") {
    if (rest.length !== 1) throw new OpsUsageError("ops receipts check needs one TENANT (cust_...)");
    return runReceiptsCheck(rest[0]);
  }
  let review;
  try {
    review = parseReviewCommand(args);
  } catch (err) {
    if (err instanceof ReviewUsageError || (err as { code?: string }).code?.startsWith?.("ERR_PARSE_ARGS")) throw new OpsUsageError((err as Error).message);
    throw err;
  }
  if (review) {
    const config = loadConfig();
    const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    try {
      await migrate(db);
      return await runReviewCommand(db, review);
    } finally {
      await db.close();
    }
  }
  throw new OpsUsageError(`unknown ops command: ${args.join(" ") || "(none)"}`);
}

// sql/ops/signing_key_revoke.sql, then a successor key at once when the revoked one was active, so
// that no instance that loads its key from here on signs with the compromised one.
async function runSigningKeyRevoke(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { "compromised-since": { type: "string" } }, strict: true, allowPositionals: true });
  const since = values["compromised-since"];
  if (positionals.length !== 1 || !since) throw new OpsUsageError("ops signing-key revoke needs one KID and --compromised-since TIME");
  const config = loadConfig();
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrate(db);
    let rows;
    try {
      rows = await runOpsScript(db, "ops/signing_key_revoke", { kid: positionals[0], compromised_since: since });
    } catch (err) {
      if (!(err instanceof DbError)) throw err;
      console.log(JSON.stringify({ ok: false, error: "refused", message: err.message }));
      return 1;
    }
    const active = await ReceiptSigner.open(db);
    console.log(JSON.stringify({ ok: true, revoked: rows[0], active_kid: active.kid, note: "running instances stop signing with it within a minute" }));
    return 0;
  } finally {
    await db.close();
  }
}
