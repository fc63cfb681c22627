// Members and invitations as plain functions over the database. The rules (who may change whom,
// the last owner, single-use invitations, caps) are PL/pgSQL functions of sql/schema/03_members.sql
// (a removal, which may revoke keys, of sql/schema/05_members_and_keys.sql);
// these wrappers shape their answers, and record each change in the tenant's audit trail in the
// change's own transaction (src/audit/trail.ts).
import type { ByMember } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { couldNameRow, newId } from "../ids.ts";
import type { SignupEmails } from "../accounts/email.ts";
import { newToken } from "../accounts/tokens.ts";
import { keyRevoked } from "../keys/manage.ts";
import { isRole, type Role } from "../accounts/roles.ts";

const iso = (now: Date) => now.toISOString();

function role(value: string, path: string): Role {
  if (!isRole(value)) throw new AppError("invalid_request", `${path}: must be one of owner, admin, developer, approver, viewer.`);
  return value;
}

/** A member row as the API shows it (the table's CHECK admits only the five roles). */
const shown = <R extends { role: string }>(row: R) => ({ ...row, role: row.role as Role });

export async function listMembers(db: Db, tenantId: string) {
  // keys: jsonb built by the query, [{key_id, label, hint, created_at}].
  const rows = await db.query("members/list", [tenantId]);
  return { ok: true as const, members: rows.map((r) => ({ ...shown(r), keys: r.keys as (MemberKey & { created_at: string })[] })) };
}

/** A role change that changes nothing (the same role) records nothing. */
export async function setRole(audit: AuditTrail, by: ByMember, memberId: string, newRole: string) {
  const wanted = role(newRole, "body/role");
  if (!couldNameRow(memberId)) throw new AppError("not_found", "No such member.");
  const changed = await audit.tx(async (q, record) => {
    const row = (await q.one("members/set_role", [by.tenantId, by.actor.member_id, memberId, wanted]))!;
    if (row.old_role !== row.role) {
      await record({ ...by, event: "member.role_changed", target: { member_id: row.member_id, role: row.role, previous_role: row.old_role } });
    }
    return (await q.one("members/get", [by.tenantId, row.member_id]))!;
  });
  return { ok: true as const, ...shown(changed) };
}

/** A key the member created that still works, as the members list and a removal name it. */
export interface MemberKey {
  key_id: string;
  label: string;
  hint: string;
}

/**
 * A member leaving is recorded as their own removal (actor and target the same member). With
 * `revokeKeys` (or the tenant's revoke_keys_on_member_removal) the keys they created are revoked in
 * the same transaction, each recorded as a key.revoked of its own by the remover; the answer names
 * the keys revoked and the ones that keep working.
 */
export async function removeMember(audit: AuditTrail, by: ByMember, memberId: string, revokeKeys: boolean, now: Date) {
  if (!couldNameRow(memberId)) throw new AppError("not_found", "No such member.");
  const row = await audit.tx(async (q, record) => {
    const row = (await q.one("members/remove", [by.tenantId, by.actor.member_id, memberId, iso(now), revokeKeys]))!;
    // jsonb built by member_remove(): [{key_id, label, hint}].
    const revoked = row.revoked_keys as MemberKey[];
    await record(
      { ...by, event: "member.removed", target: { member_id: row.member_id, role: row.role, ...(revoked.length > 0 ? { revoked_keys: revoked.map((k) => k.key_id) } : {}) } },
      ...revoked.map((k) => keyRevoked(by, k.key_id, row.member_id)),
    );
    return { revoked_keys: revoked, kept_keys: row.kept_keys as MemberKey[] };
  });
  return { ok: true as const, member_id: memberId, ...row };
}

/**
 * An invitation and its email, in one transaction with its audit event; the token exists only
 * sealed in the outbox and as a hash. The event names the invitation and its role, not the email:
 * the log keeps it forever (the invitation's row holds the address).
 */
export async function invite(
  deps: { audit: AuditTrail; mailTokens: SecretBox; signupEmails: SignupEmails },
  by: ByMember,
  inviterEmail: string,
  body: { email: string; role: string },
  now: Date,
) {
  const { audit, mailTokens } = deps;
  const email = await deps.signupEmails.accept(body.email);
  const wanted = role(body.role, "body/role");
  const token = newToken();
  const sealed = await mailTokens.seal(token, "member_invitation");
  const row = await audit.tx(async (q, record) => {
    const row = (await q.one("members/invite", [newId("inv_"), by.tenantId, by.actor.member_id, email, wanted, token, sealed, { inviter: inviterEmail }, iso(now)]))!;
    await record({ ...by, event: "member.invited", target: { invitation_id: row.invitation_id, role: wanted } });
    return row;
  });
  const { invitation_id, expires_at } = row;
  return { ok: true as const, invitation_id, email, role: wanted, expires_at };
}

export async function listInvitations(db: Db, tenantId: string, now: Date) {
  const rows = await db.query("members/invitations", [tenantId, iso(now)]);
  // status: member_invitation_status() answers only these four.
  return { ok: true as const, invitations: rows.map((r) => ({ ...shown(r), status: r.status as "pending" | "accepted" | "revoked" | "expired" })) };
}

export async function revokeInvitation(audit: AuditTrail, by: ByMember, invitationId: string, now: Date) {
  if (!couldNameRow(invitationId)) throw new AppError("not_found", "No such invitation.");
  await audit.tx(async (q, record) => {
    const row = (await q.one("members/invitation_revoke", [by.tenantId, by.actor.member_id, invitationId, iso(now)]))!;
    await record({ ...by, event: "member.invitation_revoked", target: { invitation_id: row.invitation_id, role: row.role } });
  });
  return { ok: true as const };
}
