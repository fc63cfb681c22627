import type { Db } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { hashSecret, isWellFormedSecret } from "./secret.ts";

export interface KeyPrincipal {
  tenant_id: string;
  key_id: string;
  plan: string;
}

/**
 * The tenant behind an API key secret. Malformed or mistyped secrets are refused by their
 * checksum without a lookup; revoked keys get key_revoked on the very next request, because the
 * status is read from the database every time (no cache).
 */
export async function authenticateKey(db: Db, secret: string): Promise<KeyPrincipal> {
  if (!isWellFormedSecret(secret)) throw new AppError("unauthorized", "Invalid API key.");
  const row = await db.one<{ key_id: string; tenant_id: string; status: string; plan: string }>("keys/authenticate", [await hashSecret(secret)]);
  if (!row) throw new AppError("unauthorized", "Invalid API key.");
  if (row.status !== "active") throw new AppError("key_revoked");
  return { tenant_id: row.tenant_id, key_id: row.key_id, plan: row.plan };
}
