// Creating, listing, rotating and revoking a tenant's API keys. The secret exists only in the
// response that creates it; the database keeps its SHA-256 (src/keys/secret.ts). Each change is
// recorded in the tenant's audit trail in its own transaction (src/audit/trail.ts).
import type { ByMember } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Db } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { couldNameRow, newId } from "../ids.ts";
import type { CreateKeyBody, KeyList, KeyView, UpdateKeyBody } from "./model.ts";
import { parseCidr } from "./cidr.ts";
import { decodeKeyCursor, encodeKeyCursor } from "./cursor.ts";
import { hashSecret, newSecret, secretHint } from "./secret.ts";

type KeyProps = Omit<typeof UpdateKeyBody.static, "label">;

/**
 * The properties as the database takes them (api_key_props_apply()), after the checks a schema
 * cannot make: an instant, CIDR blocks, a burst with its rate. `limits: {}` clears like null.
 */
export function keyProps(body: KeyProps & { label?: string }): Record<string, unknown> {
  const props: Record<string, unknown> = { ...body };
  if (typeof body.expires_at === "string") {
    const at = Date.parse(body.expires_at);
    if (Number.isNaN(at)) throw new AppError("invalid_request", "body/expires_at: not an ISO 8601 instant.");
    props.expires_at = new Date(at).toISOString();
  }
  if (body.allowed_ips) {
    body.allowed_ips.forEach((block, i) => {
      if (!parseCidr(block)) throw new AppError("invalid_request", `body/allowed_ips/${i}: not an IPv4 or IPv6 CIDR block (like 203.0.113.0/24 or 2001:db8::/32, no bits set beyond the prefix).`);
    });
  }
  if (body.limits) {
    if (body.limits.burst !== undefined && body.limits.per_second === undefined) throw new AppError("invalid_request", "body/limits/burst: needs limits.per_second.");
    if (Object.keys(body.limits).length === 0) props.limits = null;
  }
  return props;
}

/** `by`: the member who makes, rotates or revokes the key (recorded as created_by / revoked_by, and in the audit trail). */
export async function createKey(audit: AuditTrail, by: ByMember, body: typeof CreateKeyBody.static) {
  const { label, ...rest } = body;
  const props = keyProps(rest);
  const secret = newSecret();
  const hash = await hashSecret(secret);
  const row = await audit.tx(async (q, record) => {
    const row = (await q.one("keys/create", [newId("key_"), by.tenantId, label, hash, secretHint(secret), by.actor.member_id, props]))!;
    // The properties given at creation, as the key.updated event would name them.
    await record({ ...by, event: "key.created", target: { key_id: row.key_id, label, ...props } });
    return row;
  });
  return { ok: true as const, ...row, secret };
}

/** PATCH: changes an active key's properties; the audit trail names the new value of each that changed. */
export async function updateKey(audit: AuditTrail, by: ByMember, keyId: string, body: typeof UpdateKeyBody.static) {
  if (!couldNameRow(keyId)) throw new AppError("not_found", "No such key.");
  const props = keyProps(body);
  const key = await audit.tx(async (q, record) => {
    const row = await q.one("keys/update", [by.tenantId, keyId, props, by.actor.member_id]);
    if (!row) throw new AppError("not_found", "No such key.");
    const changed = row.changed as Record<string, unknown>;
    if (Object.keys(changed).length > 0) await record({ ...by, event: "key.updated", target: { key_id: keyId, changed } });
    return (await q.one("keys/get", [by.tenantId, keyId]))!;
  });
  return { ok: true as const, ...(key as typeof KeyView.static) };
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
/** `overlap`: seconds the old secret is still accepted (docs/api.md, "Keys for agents"). */
export async function rotateKey(audit: AuditTrail, by: ByMember, keyId: string, overlap = 0) {
  if (!couldNameRow(keyId)) throw new AppError("not_found", "No such key.");
  const secret = newSecret();
  const hash = await hashSecret(secret);
  const row = await audit.tx(async (q, record) => {
    const row = await q.one("keys/rotate", [by.tenantId, keyId, newId("key_"), hash, secretHint(secret), by.actor.member_id, overlap]);
    if (!row) throw new AppError("not_found", "No such key.");
    const target = { key_id: row.revoked_key_id, replaced_by: row.key_id, label: row.label };
    await record({ ...by, event: "key.rotated", target: overlap > 0 ? { ...target, overlap } : target });
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
    await record(keyRevoked(by, row.key_id));
    return row;
  });
  return { ok: true as const, ...row };
}

/**
 * The key.revoked event of a key revoked by `by`, whoever revoked it: the revoke route, or a
 * member's removal (`removedMember`, whose key it was; src/members/manage.ts).
 */
export function keyRevoked(by: ByMember, keyId: string, removedMember?: string) {
  const target = removedMember === undefined ? { key_id: keyId } : { key_id: keyId, removed_member_id: removedMember };
  return { ...by, event: "key.revoked" as const, target };
}
