// Members and invitations as plain functions over the database. The rules (who may change whom,
// the last owner, single-use invitations, caps) are PL/pgSQL functions of sql/schema/03_members.sql;
// these wrappers shape their answers.
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { couldNameRow, newId } from "../ids.ts";
import { acceptSignupEmail } from "../accounts/email.ts";
import { newToken } from "../accounts/tokens.ts";
import { isRole, type Role } from "./roles.ts";

const iso = (now: Date) => now.toISOString();

function role(value: string, path: string): Role {
  if (!isRole(value)) throw new AppError("invalid_request", `${path}: must be one of owner, admin, developer, approver, viewer.`);
  return value;
}

/** A member row as the API shows it (the table's CHECK admits only the five roles). */
const shown = <R extends { role: string }>(row: R) => ({ ...row, role: row.role as Role });

export async function listMembers(db: Db, tenantId: string) {
  return { ok: true as const, members: (await db.query("members/list", [tenantId])).map(shown) };
}

export async function setRole(db: Db, tenantId: string, actor: string, memberId: string, newRole: string) {
  const wanted = role(newRole, "body/role");
  if (!couldNameRow(memberId)) throw new AppError("not_found", "No such member.");
  const changed = await db.tx(async (q) => {
    const row = await q.one("members/set_role", [tenantId, actor, memberId, wanted]);
    return (await q.one("members/get", [tenantId, row!.member_id]))!;
  });
  return { ok: true as const, ...shown(changed) };
}

export async function removeMember(db: Db, tenantId: string, actor: string, memberId: string, now: Date) {
  if (!couldNameRow(memberId)) throw new AppError("not_found", "No such member.");
  await db.query("members/remove", [tenantId, actor, memberId, iso(now)]);
  return { ok: true as const };
}

/** An invitation and its email, in one transaction; the token exists only sealed in the outbox and as a hash. */
export async function invite(db: Db, mailTokens: SecretBox, tenantId: string, actor: { member_id: string; email: string }, body: { email: string; role: string }, now: Date) {
  const email = await acceptSignupEmail(body.email);
  const wanted = role(body.role, "body/role");
  const token = newToken();
  const sealed = await mailTokens.seal(token, "member_invitation");
  const row = await db.one("members/invite", [newId("inv_"), tenantId, actor.member_id, email, wanted, token, sealed, { inviter: actor.email }, iso(now)]);
  const { invitation_id, expires_at } = row!;
  return { ok: true as const, invitation_id, email, role: wanted, expires_at };
}

export async function listInvitations(db: Db, tenantId: string, now: Date) {
  const rows = await db.query("members/invitations", [tenantId, iso(now)]);
  // status: member_invitation_status() answers only these four.
  return { ok: true as const, invitations: rows.map((r) => ({ ...shown(r), status: r.status as "pending" | "accepted" | "revoked" | "expired" })) };
}

export async function revokeInvitation(db: Db, tenantId: string, actor: string, invitationId: string, now: Date) {
  if (!couldNameRow(invitationId)) throw new AppError("not_found", "No such invitation.");
  await db.query("members/invitation_revoke", [tenantId, actor, invitationId, iso(now)]);
  return { ok: true as const };
}
