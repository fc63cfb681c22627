// A tenant's remote MCP gateways (docs/api.md, "Remote MCP gateways"): register (the upstream's URL
// checked as a webhook's is, a shared secret sealed), list, read, disable or enable, delete; and
// each member's own secret for a per-member upstream, sealed, never shown back. Every change is an
// event of the audit trail, recorded in the transaction of the change; an event names the
// upstream's host, never its whole URL (a path may hold a token).
import type { ByMember } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Queryable } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { couldNameRow, newId } from "../ids.ts";
import { hashSecret, newSecret, secretHint } from "../keys/secret.ts";
import { gatewayResource } from "../oauth/resources.ts";
import { TargetRefused, type WebhookTargets } from "../webhooks/target.ts";

/** The HKDF purpose of the key that seals the gateways' secrets (src/crypto/secret-box.ts). */
export const GATEWAY_SECRET_PURPOSE = "warden mcp gateway secret v1";

/** What the sealed values are bound to: a secret sealed for one gateway (or member) opens for no other. */
export const sealContext = {
  key: (gatewayId: string) => `${gatewayId}:key`,
  shared: (gatewayId: string) => `${gatewayId}:shared`,
  member: (gatewayId: string, memberId: string) => `${gatewayId}:member:${memberId}`,
};

export interface GatewayWrites {
  audit: AuditTrail;
  secrets: SecretBox;
  targets: WebhookTargets;
  publicUrl: string;
}

const notFound = () => new AppError("not_found", "No such gateway.");

type Row = { gateway_id: string; name: string; upstream_url: string; upstream_auth: string; status: string; created_at: string; created_by: string | null; member_secret_set?: boolean };

function shown(publicUrl: string, row: Row) {
  return {
    gateway_id: row.gateway_id,
    name: row.name,
    url: gatewayResource(publicUrl, row.gateway_id),
    upstream_url: row.upstream_url,
    upstream_auth: row.upstream_auth as "none" | "shared" | "per_member",
    status: row.status as "active" | "disabled",
    created_at: row.created_at,
    created_by: row.created_by,
    member_secret_set: row.member_secret_set ?? false,
  };
}

export async function createGateway(w: GatewayWrites, by: ByMember, body: { name: string; upstream_url: string; upstream_auth: "none" | "shared" | "per_member"; secret?: string }) {
  if (body.upstream_auth === "shared" && body.secret === undefined) throw new AppError("invalid_request", "body/secret: required when upstream_auth is shared.");
  if (body.upstream_auth !== "shared" && body.secret !== undefined) {
    throw new AppError("invalid_request", "body/secret: only for upstream_auth shared (per_member: each member sets their own with PUT .../secret).");
  }
  let url: string;
  try {
    url = await w.targets.check(body.upstream_url);
  } catch (err) {
    if (err instanceof TargetRefused) throw new AppError("invalid_request", `body/upstream_url: ${err.message}.`);
    throw err;
  }
  const gatewayId = newId("gw_");
  const keyId = newId("key_");
  const keySecret = newSecret();
  const [sealedShared, sealedKey, keyHash] = await Promise.all([
    body.secret === undefined ? null : w.secrets.seal(body.secret, sealContext.shared(gatewayId)),
    w.secrets.seal(keySecret, sealContext.key(gatewayId)),
    hashSecret(keySecret),
  ]);
  const row = await w.audit.tx(async (q, record) => {
    const row = (await q.one("gateways/create", [gatewayId, by.tenantId, by.actor.member_id, body.name, url, body.upstream_auth, sealedShared, keyId, keyHash, secretHint(keySecret), sealedKey]))!;
    await record({ ...by, event: "gateway.created", target: { gateway_id: gatewayId, name: body.name, host: new URL(url).host, upstream_auth: body.upstream_auth, key_id: keyId } });
    return row;
  });
  return { ok: true as const, ...shown(w.publicUrl, row) };
}

export async function listGateways(db: Queryable, publicUrl: string, tenantId: string, memberId: string) {
  const rows = (await db.query("gateways/list", [tenantId, memberId])) as Row[];
  return { ok: true as const, gateways: rows.map((r) => shown(publicUrl, r)) };
}

export async function getGateway(db: Queryable, publicUrl: string, tenantId: string, memberId: string, gatewayId: string) {
  if (!couldNameRow(gatewayId)) throw notFound();
  const row = (await db.one("gateways/get", [tenantId, gatewayId, memberId])) as Row | undefined;
  if (!row) throw notFound();
  return { ok: true as const, ...shown(publicUrl, row) };
}

export async function setGatewayEnabled(audit: AuditTrail, by: ByMember, gatewayId: string, enabled: boolean) {
  if (!couldNameRow(gatewayId)) throw notFound();
  const row = await audit.tx(async (q, record) => {
    const row = (await q.one("gateways/set_status", [by.tenantId, by.actor.member_id, gatewayId, enabled]))!;
    if (row.changed) await record({ ...by, event: enabled ? "gateway.enabled" : "gateway.disabled", target: { gateway_id: gatewayId } });
    return row;
  });
  return { ok: true as const, gateway_id: row.gateway_id, status: row.status as "active" | "disabled" };
}

export async function deleteGateway(audit: AuditTrail, by: ByMember, gatewayId: string) {
  if (!couldNameRow(gatewayId)) throw notFound();
  await audit.tx(async (q, record) => {
    const row = (await q.one("gateways/delete", [by.tenantId, by.actor.member_id, gatewayId]))!;
    await record({ ...by, event: "gateway.deleted", target: { gateway_id: gatewayId, name: row.name, key_id: row.key_id } });
  });
  return { ok: true as const };
}

/** The caller's own secret for a per-member gateway's upstream, sealed for them and this gateway alone. */
export async function setMemberSecret(w: Pick<GatewayWrites, "audit" | "secrets">, by: ByMember, gatewayId: string, secret: string) {
  if (!couldNameRow(gatewayId)) throw notFound();
  const sealed = await w.secrets.seal(secret, sealContext.member(gatewayId, by.actor.member_id));
  const row = await w.audit.tx(async (q, record) => {
    const row = (await q.one("gateways/secret_set", [by.tenantId, by.actor.member_id, gatewayId, sealed]))!;
    await record({ ...by, event: "gateway.secret_set", target: { gateway_id: gatewayId, member_id: by.actor.member_id } });
    return row;
  });
  return { ok: true as const, gateway_id: row.gateway_id, updated_at: row.updated_at };
}

export async function deleteMemberSecret(audit: AuditTrail, by: ByMember, gatewayId: string) {
  if (!couldNameRow(gatewayId)) throw notFound();
  const deleted = await audit.tx(async (q, record) => {
    const row = (await q.one("gateways/secret_delete", [by.tenantId, by.actor.member_id, gatewayId]))!;
    if (row.deleted) await record({ ...by, event: "gateway.secret_deleted", target: { gateway_id: gatewayId, member_id: by.actor.member_id } });
    return row.deleted;
  });
  return { ok: true as const, deleted };
}

/**
 * JWT_SECRET changed (JWT_SECRET_PREVIOUS set): every live gateway's secrets (its key's, its shared
 * one) and every member's own secret that the previous service secret sealed are sealed again
 * under the new one, before the previous one is dropped.
 */
export async function resealGatewaySecrets(db: Queryable, box: SecretBox): Promise<{ resealed: number; unreadable: number }> {
  const PAGE = 500;
  let resealed = 0;
  let unreadable = 0;
  const again = async (sealed: string | null, context: string): Promise<{ sealed: string | null; changed: boolean; lost: boolean }> => {
    if (sealed === null) return { sealed, changed: false, lost: false };
    const open = await box.unseal(sealed, context);
    if (!open) return { sealed, changed: false, lost: true };
    if (open.under !== "previous") return { sealed, changed: false, lost: false };
    return { sealed: await box.seal(open.secret, context), changed: true, lost: false };
  };
  let after = { tenantId: "", gatewayId: "" };
  for (;;) {
    const rows = await db.query("gateways/sealed_page", [after.tenantId, after.gatewayId, PAGE]);
    for (const row of rows) {
      const [key, shared] = await Promise.all([again(row.key_secret_sealed, sealContext.key(row.gateway_id)), again(row.secret_sealed, sealContext.shared(row.gateway_id))]);
      if (key.lost || shared.lost) unreadable++;
      if (!key.changed && !shared.changed) continue;
      const [done] = await db.query("gateways/reseal", [row.tenant_id, row.gateway_id, row.key_secret_sealed!, row.secret_sealed!, key.sealed!, shared.sealed!]);
      if (done?.resealed) resealed++;
    }
    if (rows.length < PAGE) break;
    const last = rows[rows.length - 1]!;
    after = { tenantId: last.tenant_id, gatewayId: last.gateway_id };
  }
  let member = { tenantId: "", gatewayId: "", memberId: "" };
  for (;;) {
    const rows = await db.query("gateways/member_sealed_page", [member.tenantId, member.gatewayId, member.memberId, PAGE]);
    for (const row of rows) {
      const secret = await again(row.secret_sealed, sealContext.member(row.gateway_id, row.member_id));
      if (secret.lost) unreadable++;
      if (!secret.changed) continue;
      const [done] = await db.query("gateways/member_reseal", [row.tenant_id, row.gateway_id, row.member_id, row.secret_sealed, secret.sealed!]);
      if (done?.resealed) resealed++;
    }
    if (rows.length < PAGE) return { resealed, unreadable };
    const last = rows[rows.length - 1]!;
    member = { tenantId: last.tenant_id, gatewayId: last.gateway_id, memberId: last.member_id };
  }
}
