// /customer/members (the tenant's people and their roles), /customer/members/invitations and
// /customer/settings (docs/api.md, "Teams"). Who may call each route is src/accounts/roles.ts's
// table, checked by Sessions.require(); who may change whom is the database's rule.
import { Elysia } from "elysia";
import type { SignupEmails } from "../accounts/email.ts";
import type { Sessions } from "../accounts/sessions.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import type { Mailer } from "../mail/worker.ts";
import { sessionGuard } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { withIdempotency } from "../http/idempotency.ts";
import { byMember } from "../audit/events.ts";
import { credentials } from "../accounts/lifecycle.ts";
import { invite, listInvitations, listMembers, removeMember, revokeInvitation, setRole } from "./manage.ts";
import {
  InvitationBody, InvitationCreated, InvitationList, InvitationParams, MemberList, MemberParams, MemberRemoved, MemberResponse, Ok, RemoveQuery,
  RoleBody, SettingsBody, SettingsResponse,
} from "./model.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface MembersDeps {
  audit: AuditTrail;
  db: Db;
  log: Logger;
  mail: Mailer;
  mailTokens: SecretBox;
  now: () => Date;
  sessions: Sessions;
  signupEmails: SignupEmails;
}

const security = [{ bearer: [] as string[] }];
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse };

export function membersRoutes(deps: MembersDeps) {
  return (
    new Elysia({ name: "members", prefix: "/customer" })
      // Before body validation: a stranger learns nothing about the schema.
      .use(sessionGuard(deps.sessions))
      .guard({ session: true })
      .get("/members", ({ customer }) => listMembers(deps.db, customer.tenant_id), {
        response: { 200: MemberList, 401: ErrorResponse, 403: ErrorResponse },
        detail: { summary: "The tenant's members, oldest first, with their roles and whether each has a second factor", tags: ["members"], security },
      })
      .post(
        "/members/invitations",
        ({ customer, body, request }) =>
          withIdempotency(deps, request, customer.tenant_id, body, async () => {
            const { email } = (await credentials(deps.db, customer.account_id))!;
            const created = await invite(deps, byMember(customer, request), email, body, deps.now());
            deps.mail.nudge();
            return { status: 201, body: created };
          }),
        {
          body: InvitationBody,
          parse: "json",
          response: { 201: InvitationCreated, ...errors },
          detail: { summary: "Invite an email with a role for 7 days: an email with a link; an owner alone invites owners", tags: ["members"], security },
        },
      )
      .get("/members/invitations", ({ customer }) => listInvitations(deps.db, customer.tenant_id, deps.now()), {
        response: { 200: InvitationList, 401: ErrorResponse, 403: ErrorResponse },
        detail: { summary: "The tenant's invitations, newest first: pending, accepted, revoked or expired", tags: ["members"], security },
      })
      .post(
        "/members/invitations/:invitation_id/revoke",
        ({ customer, params, request }) => revokeInvitation(deps.audit, byMember(customer, request), params.invitation_id, deps.now()),
        {
          params: InvitationParams,
          response: { 200: Ok, ...errors },
          detail: { summary: "Revoke a pending invitation: its link stops working", tags: ["members"], security },
        },
      )
      .patch("/members/:member_id", ({ customer, params, body, request }) => setRole(deps.audit, byMember(customer, request), params.member_id, body.role), {
        params: MemberParams,
        body: RoleBody,
        parse: "json",
        response: { 200: MemberResponse, ...errors },
        detail: {
          summary: "Give a member another role (an owner alone changes owners or makes one); the member's sessions of this tenant end; the last owner stays (409 last_owner)",
          tags: ["members"],
          security,
        },
      })
      .delete(
        "/members/:member_id",
        ({ customer, params, query, request }) => removeMember(deps.audit, byMember(customer, request), params.member_id, query.revoke_keys === true, deps.now()),
        {
          params: MemberParams,
          query: RemoveQuery,
          response: { 200: MemberRemoved, ...errors },
          detail: {
            summary:
              "Remove a member (anyone may leave; an admin removes others, an owner removes owners); their sessions of this tenant end at once. The keys they created keep working (kept_keys) unless revoke_keys=true or the tenant's revoke_keys_on_member_removal revokes them in the same step (revoked_keys)",
            tags: ["members"],
            security,
          },
        },
      )
      .get("/settings", async ({ customer }) => ({ ok: true as const, settings: (await deps.db.one("members/settings", [customer.tenant_id]))! }), {
        response: { 200: SettingsResponse, 401: ErrorResponse, 403: ErrorResponse },
        detail: { summary: "The tenant's settings", tags: ["members"], security },
      })
      .put(
        "/settings",
        async ({ customer, body, request }) => {
          // An owner who requires a second factor has one: else they would lock themselves out of all but enrolling.
          if (body.require_mfa === true && !customer.mfa_active) {
            throw new AppError("mfa_enrollment_required", "Turn on your own second factor (Account) before you require one of every member.");
          }
          const settings = await deps.audit.tx(async (q, record) => {
            const row = (await q.one("members/settings_set", [
              customer.tenant_id, body.require_mfa ?? null, body.allow_self_approval ?? null, body.revoke_keys_on_member_removal ?? null,
            ]))!;
            // The settings that changed, with their new values; a PUT that changes nothing records nothing.
            const changed = Object.fromEntries(
              ([["require_mfa", row.was_require_mfa], ["allow_self_approval", row.was_allow_self_approval],
                ["revoke_keys_on_member_removal", row.was_revoke_keys_on_member_removal]] as const)
                .filter(([name, was]) => row[name] !== was)
                .map(([name]) => [name, row[name]]),
            );
            if (Object.keys(changed).length > 0) await record({ ...byMember(customer, request), event: "settings.changed", target: changed });
            return { require_mfa: row.require_mfa, allow_self_approval: row.allow_self_approval, revoke_keys_on_member_removal: row.revoke_keys_on_member_removal };
          });
          return { ok: true as const, settings };
        },
        {
          body: SettingsBody,
          parse: "json",
          response: { 200: SettingsResponse, ...errors },
          detail: {
            summary:
              "Change the tenant's settings (owner): require_mfa (members without a second factor may only enrol one), allow_self_approval, revoke_keys_on_member_removal (removing a member always revokes the keys they created)",
            tags: ["members"],
            security,
          },
        },
      )
  );
}
