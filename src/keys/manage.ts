// Creating, listing, rotating and revoking a tenant's API keys. The secret exists only in the
// response that creates it; the database keeps its SHA-256 (src/keys/secret.ts). Each change is
// recorded in the tenant's audit trail in its own transaction (src/audit/trail.ts).
import type { ByMember } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Db } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { couldNameRow, newId } from "../ids.ts";
import type { KeyList } from "./model.ts";
import { decodeKeyCursor, encodeKeyCursor } from "./cursor.ts";
import { hashSecret, newSecret, secretHint } from "./secret.ts";

/** `by`: the member who makes, rotates or revokes the key (recorded as created_by / revoked_by, and in the audit trail). */
export async function createKey(audit: AuditTrail, by: ByMember, label: string) {
  const secret = newSecret();
  const hash = await hashSecret(secret);
  const row = await audit.tx(async (q, record) => {
    const row = (await q.one("keys/create", [newId("key_"), by.tenantId, label, hash, secretHint(secret), by.actor.member_id]))!;
    await record({ ...by, event: "key.created", target: { key_id: row.key_id, label } });
    return row;
  });
  return { ok: true as const, ...row, secret };
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
export async function rotateKey(audit: AuditTrail, by: ByMember, keyId: string) {
  if (!couldNameRow(keyId)) throw new AppError("not_found", "No such key.");
  const secret = newSecret();
  const hash = await hashSecret(secret);
  const row = await audit.tx(async (q, record) => {
    const row = await q.one("keys/rotate", [by.tenantId, keyId, newId("key_"), hash, secretHint(secret), by.actor.member_id]);
    if (!row) throw new AppError("not_found", "No such key.");
    await record({ ...by, event: "key.rotated", target: { key_id: row.revoked_key_id, replaced_by: row.key_id, label: row.label } });
    return row;
  });
  const { revoked_key_id, key_id, tenant_id, label, status, created_at, created_by } = row;
  return { ok: true as const, revoked_key_id, key_id, tenant_id, label, status, secret, created_at, created_by };
}

export async function revokeKey(audit: AuditTrail, by: ByMember, keyId: string) {
  if (!couldNameRow(keyId)) throw new AppError("not_found", "No such key.");
  const row = await audit.tx(async (q, record) => {
    const row = await q.one("keys/revoke", [by.tenantId, keyId, by.actor.member_id]);
    if (!row) throw new AppError("not_found", "No such key.");
    await record({ ...by, event: "key.revoked", target: { key_id: row.key_id } });
    return row;
  });
  return { ok: true as const, ...row };
}
