// Creating, listing, rotating and revoking a tenant's API keys. The secret exists only in the
// response that creates it; the database keeps its SHA-256 (src/keys/secret.ts).
import type { Db } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { couldNameRow, newId } from "../ids.ts";
import type { KeyList } from "./model.ts";
import { decodeKeyCursor, encodeKeyCursor } from "./cursor.ts";
import { hashSecret, newSecret, secretHint } from "./secret.ts";

/** `memberId`: who makes, rotates or revokes the key (recorded as created_by / revoked_by). */
export async function createKey(db: Db, tenantId: string, label: string, memberId: string) {
  const secret = newSecret();
  const row = await db.one("keys/create", [newId("key_"), tenantId, label, await hashSecret(secret), secretHint(secret), memberId]);
  return { ok: true as const, ...row!, secret };
}

/** One page, newest first; next_cursor is null on the last page. */
export async function listKeys(db: Db, tenantId: string, limit: number, cursor: string | undefined) {
  const after = cursor === undefined ? null : decodeKeyCursor(cursor);
  if (after === undefined) throw new AppError("invalid_request", "query/cursor: not a cursor this service gave out.");
  const rows = await db.query("keys/list", [tenantId, after?.at ?? null, after?.keyId ?? null, limit + 1]);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const next_cursor = rows.length > limit && last ? encodeKeyCursor(last.page_position, last.key_id) : null;
  // status: the table's CHECK allows only the model's two.
  const keys = page.map(({ page_position: _, ...key }) => key) as (typeof KeyList.static)["keys"];
  return { ok: true as const, keys, next_cursor };
}

/** One stored procedure revokes the old key and issues the new one (WK001 -> 409 when not active). */
export async function rotateKey(db: Db, tenantId: string, keyId: string, memberId: string) {
  if (!couldNameRow(keyId)) throw new AppError("not_found", "No such key.");
  const secret = newSecret();
  const row = await db.one("keys/rotate", [tenantId, keyId, newId("key_"), await hashSecret(secret), secretHint(secret), memberId]);
  if (!row) throw new AppError("not_found", "No such key.");
  const { revoked_key_id, key_id, tenant_id, label, status, created_at, created_by } = row;
  return { ok: true as const, revoked_key_id, key_id, tenant_id, label, status, secret, created_at, created_by };
}

export async function revokeKey(db: Db, tenantId: string, keyId: string, memberId: string) {
  if (!couldNameRow(keyId)) throw new AppError("not_found", "No such key.");
  const row = await db.one("keys/revoke", [tenantId, keyId, memberId]);
  if (!row) throw new AppError("not_found", "No such key.");
  return { ok: true as const, ...row };
}
