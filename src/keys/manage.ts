// Creating, listing, rotating and revoking a tenant's API keys. The secret exists only in the
// response that creates it; the database keeps its SHA-256 (src/keys/secret.ts).
import type { Db } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { couldNameRow, newId } from "../ids.ts";
import type { KeyList } from "./model.ts";
import { hashSecret, newSecret, secretHint } from "./secret.ts";

export async function createKey(db: Db, tenantId: string, label: string) {
  const secret = newSecret();
  const row = await db.one("keys/create", [newId("key_"), tenantId, label, await hashSecret(secret), secretHint(secret)]);
  return { ok: true as const, ...row!, secret };
}

export async function listKeys(db: Db, tenantId: string) {
  // status: the table's CHECK allows only the model's two.
  return { ok: true as const, keys: (await db.query("keys/list", [tenantId])) as (typeof KeyList.static)["keys"] };
}

/** One stored procedure revokes the old key and issues the new one (WK001 -> 409 when not active). */
export async function rotateKey(db: Db, tenantId: string, keyId: string) {
  if (!couldNameRow(keyId)) throw new AppError("not_found", "No such key.");
  const secret = newSecret();
  const row = await db.one("keys/rotate", [tenantId, keyId, newId("key_"), await hashSecret(secret), secretHint(secret)]);
  if (!row) throw new AppError("not_found", "No such key.");
  const { revoked_key_id, key_id, tenant_id, label, status, created_at } = row;
  return { ok: true as const, revoked_key_id, key_id, tenant_id, label, status, secret, created_at };
}

export async function revokeKey(db: Db, tenantId: string, keyId: string) {
  if (!couldNameRow(keyId)) throw new AppError("not_found", "No such key.");
  const row = await db.one("keys/revoke", [tenantId, keyId]);
  if (!row) throw new AppError("not_found", "No such key.");
  return { ok: true as const, ...row };
}
