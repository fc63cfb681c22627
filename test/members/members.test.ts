// Teams end to end through HTTP: an owner invites by email, the invited person accepts from the
// link (new, or signed in), roles decide what each may do, the last owner stays, and a role change
// or a removal ends that member's sessions of the tenant on the very next request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generate } from "otplib";
import type { Service } from "../../src/app/service.ts";
import { bearer, signupWithMail } from "../helpers/accounts.ts";
import { closeMailFixture, linkToken, openMailFixture, type Inbox } from "../helpers/mail.ts";
import { call, expectErrorShape, GOOD_PASSWORD, uniqueEmail } from "../helpers/service.ts";

let inbox: Inbox;
let service: Service;
beforeAll(async () => ({ inbox, service } = await openMailFixture()));
afterAll(() => closeMailFixture({ inbox, service }));

const as = (token: string) => ({ headers: bearer(token), service });

/** The owner of a new tenant. */
async function owner() {
  const user = await signupWithMail(service, inbox, GOOD_PASSWORD, "owner");
  return { ...user, memberId: (await call("GET", "/customer/account", as(user.token))).body.member_id as string };
}

/** Invites `email` as `role` and returns the token of the emailed link. */
async function invited(by: string, email: string, role: string): Promise<{ token: string; invitationId: string }> {
  const before = inbox.to(email).length;
  const reply = await call("POST", "/customer/members/invitations", { json: { email, role }, ...as(by) });
  expect(reply.status).toBe(201);
  const messages = await inbox.waitFor(email, before + 1);
  return { token: linkToken(messages[before], "/console/invitation"), invitationId: reply.body.invitation_id };
}

/** A new person who joined `by`'s tenant as `role`, with their session of it. */
async function joined(by: string, role: string) {
  const email = uniqueEmail(role);
  const { token } = await invited(by, email, role);
  const reply = await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD }, service });
  expect(reply.status).toBe(200);
  return { email, token: reply.body.token as string, memberId: reply.body.member_id as string, tenantId: reply.body.tenant_id as string };
}

describe("invitations", () => {
  test("an owner invites; the new person accepts from the emailed link, sets a password, and is a member with that role", async () => {
    const boss = await owner();
    const email = uniqueEmail("dev");
    const { token, invitationId } = await invited(boss.token, email, "developer");
    expect(invitationId).toMatch(/^inv_[0-9A-Za-z]{22}$/);
    const listed = await call("GET", "/customer/members/invitations", as(boss.token));
    expect(listed.body.invitations).toEqual([expect.objectContaining({ invitation_id: invitationId, email, role: "developer", status: "pending" })]);

    const accepted = await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD }, service });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ ok: true, tenant_id: boss.tenantId, role: "developer", member_id: expect.stringMatching(/^mbr_/) });
    // The session works, as that member, and the link proved the email.
    const account = await call("GET", "/customer/account", as(accepted.body.token));
    expect(account.body).toMatchObject({ tenant_id: boss.tenantId, email, email_verified: true, role: "developer" });
    // Login answers the same tenant.
    const login = await call("POST", "/auth/login", { json: { email, password: GOOD_PASSWORD }, service });
    expect(login.body).toMatchObject({ tenant_id: boss.tenantId, role: "developer" });

    const members = await call("GET", "/customer/members", as(boss.token));
    expect(members.body.members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([[boss.email, "owner"], [email, "developer"]]);
    // Single use: the same link again is token_used; the list shows it accepted.
    expectErrorShape(await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD }, service }), 400, "token_used");
    expect((await call("GET", "/customer/members/invitations", as(boss.token))).body.invitations[0].status).toBe("accepted");
  });

  test("a person with an account accepts with their own session and no password, and then has two tenants to switch between", async () => {
    const first = await owner();
    const second = await owner();
    const { token } = await invited(first.token, second.email, "approver");
    // Without the session, the person's email already has an account: a password that is not its own is refused, nothing joined.
    expectErrorShape(await call("POST", "/auth/invitations/accept", { json: { token, password: "another good passphrase" }, service }), 401, "unauthorized");
    expectErrorShape(await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD }, ...as(second.token) }), 400, "invalid_request");
    const accepted = await call("POST", "/auth/invitations/accept", { json: { token }, ...as(second.token) });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ tenant_id: first.tenantId, role: "approver" });

    const tenants = await call("GET", "/auth/tenants", as(second.token));
    expect(tenants.body.tenants.map((t: { tenant_id: string; role: string; current: boolean }) => [t.tenant_id, t.role, t.current])).toEqual([
      [second.tenantId, "owner", true],
      [first.tenantId, "approver", false],
    ]);
    const switched = await call("POST", "/auth/switch", { json: { tenant_id: first.tenantId }, ...as(second.token) });
    expect(switched.status).toBe(200);
    expect(switched.body).toMatchObject({ tenant_id: first.tenantId, role: "approver" });
    expect((await call("GET", "/customer/account", as(switched.body.token))).body).toMatchObject({ tenant_id: first.tenantId, email: second.email, role: "approver" });
    // Login opens the tenant used last.
    expect((await call("POST", "/auth/login", { json: { email: second.email, password: GOOD_PASSWORD }, service })).body.tenant_id).toBe(first.tenantId);
    // A tenant the person is no member of: 404, whatever its shape.
    for (const tenant_id of [`cust_${"A".repeat(22)}`, "cust_x", ""]) {
      expectErrorShape(await call("POST", "/auth/switch", { json: { tenant_id }, ...as(second.token) }), 404, "not_found");
    }
  });

  test("signed in as another email, an invitation is refused and stays pending", async () => {
    const boss = await owner();
    const stranger = await owner();
    const { token } = await invited(boss.token, uniqueEmail("other"), "viewer");
    expectErrorShape(await call("POST", "/auth/invitations/accept", { json: { token }, ...as(stranger.token) }), 400, "invalid_token");
    expect((await call("GET", "/customer/members/invitations", as(boss.token))).body.invitations[0].status).toBe("pending");
  });

  test("revoked and unknown links are invalid_token; an admin cannot invite an owner; a member cannot be invited twice", async () => {
    const boss = await owner();
    const { token, invitationId } = await invited(boss.token, uniqueEmail("revoked"), "viewer");
    expect((await call("POST", `/customer/members/invitations/${invitationId}/revoke`, as(boss.token))).status).toBe(200);
    expectErrorShape(await call("POST", `/customer/members/invitations/${invitationId}/revoke`, as(boss.token)), 409, "not_pending");
    expectErrorShape(await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD }, service }), 400, "invalid_token");
    expectErrorShape(await call("POST", "/auth/invitations/accept", { json: { token: "nope", password: GOOD_PASSWORD }, service }), 400, "invalid_token");
    expectErrorShape(await call("POST", `/customer/members/invitations/inv_${"A".repeat(22)}/revoke`, as(boss.token)), 404, "not_found");

    const admin = await joined(boss.token, "admin");
    const refused = await call("POST", "/customer/members/invitations", { json: { email: uniqueEmail("o"), role: "owner" }, ...as(admin.token) });
    expectErrorShape(refused, 403, "forbidden_role");
    expect(refused.body.required_role).toBe("owner");
    expectErrorShape(await call("POST", "/customer/members/invitations", { json: { email: admin.email, role: "viewer" }, ...as(boss.token) }), 409, "already_member");
    expectErrorShape(await call("POST", "/customer/members/invitations", { json: { email: "not an email", role: "viewer" }, ...as(boss.token) }), 400, "invalid_email");
    expectErrorShape(await call("POST", "/customer/members/invitations", { json: { email: "x@mailinator.com", role: "viewer" }, ...as(boss.token) }), 400, "disposable_email");
    expectErrorShape(await call("POST", "/customer/members/invitations", { json: { email: uniqueEmail("r"), role: "superuser" }, ...as(boss.token) }), 400, "invalid_request");
  });

  test("an expired invitation is token_expired and shows as expired", async () => {
    const boss = await owner();
    const { token } = await invited(boss.token, uniqueEmail("late"), "viewer");
    const { createService } = await import("../../src/app/service.ts");
    const { testConfig } = await import("../helpers/service.ts");
    const { createLogger } = await import("../../src/log.ts");
    const later = await createService(testConfig(), { db: service.deps.db, log: createLogger("silent"), now: () => new Date(Date.now() + 7 * 86_400_000 + 1000) });
    expectErrorShape(await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD }, service: later }), 400, "token_expired");
    expect((await call("GET", "/customer/members/invitations", { headers: bearer(boss.token), service: later })).body.invitations[0].status).toBe("expired");
  });
});

describe("roles", () => {
  test("a viewer reads but changes nothing: 403 forbidden_role naming the role needed", async () => {
    const boss = await owner();
    const viewer = await joined(boss.token, "viewer");
    expect((await call("GET", "/customer/keys", as(viewer.token))).status).toBe(200);
    expect((await call("GET", "/customer/members", as(viewer.token))).status).toBe(200);
    const refused = await call("POST", "/customer/keys", { json: { label: "x" }, ...as(viewer.token) });
    expectErrorShape(refused, 403, "forbidden_role");
    expect(refused.body.required_role).toBe("developer");
    const upgrade = await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "x" }, ...as(viewer.token) });
    expectErrorShape(upgrade, 403, "forbidden_role");
    expect(upgrade.body.required_role).toBe("owner");
  });

  test("a developer makes keys, and the key names who made and who revoked it", async () => {
    const boss = await owner();
    const dev = await joined(boss.token, "developer");
    const made = await call("POST", "/customer/keys", { json: { label: "bot" }, ...as(dev.token) });
    expect(made.status).toBe(201);
    expect(made.body.created_by).toBe(dev.memberId);
    const revoked = await call("POST", `/customer/keys/${made.body.key_id}/revoke`, as(boss.token));
    expect(revoked.body.revoked_by).toBe(boss.memberId);
    const listed = (await call("GET", "/customer/keys", as(boss.token))).body.keys.find((k: { key_id: string }) => k.key_id === made.body.key_id);
    expect(listed).toMatchObject({ created_by: dev.memberId, revoked_by: boss.memberId });
    // Publishing a policy is an admin's.
    const publish = await call("PUT", "/customer/policy/tests", { json: { cases: [] }, ...as(dev.token) });
    expectErrorShape(publish, 403, "forbidden_role");
    expect(publish.body.required_role).toBe("admin");
  });

  test("the last owner cannot leave or be demoted; a second owner makes both possible", async () => {
    const boss = await owner();
    expectErrorShape(await call("DELETE", `/customer/members/${boss.memberId}`, as(boss.token)), 409, "last_owner");
    expectErrorShape(await call("PATCH", `/customer/members/${boss.memberId}`, { json: { role: "admin" }, ...as(boss.token) }), 409, "last_owner");
    const admin = await joined(boss.token, "admin");
    // An admin touches no owner, and makes none.
    expectErrorShape(await call("PATCH", `/customer/members/${boss.memberId}`, { json: { role: "viewer" }, ...as(admin.token) }), 403, "forbidden_role");
    expectErrorShape(await call("PATCH", `/customer/members/${admin.memberId}`, { json: { role: "owner" }, ...as(admin.token) }), 403, "forbidden_role");
    const promoted = await call("PATCH", `/customer/members/${admin.memberId}`, { json: { role: "owner" }, ...as(boss.token) });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ member_id: admin.memberId, role: "owner", email: admin.email });
    // Now the first owner may leave.
    expect((await call("DELETE", `/customer/members/${boss.memberId}`, as(boss.token))).status).toBe(200);
    expectErrorShape(await call("GET", "/customer/keys", as(boss.token)), 401, "unauthorized");
  });

  test("a role change ends that member's sessions of the tenant on the next request; a removal too", async () => {
    const boss = await owner();
    const dev = await joined(boss.token, "developer");
    expect((await call("GET", "/customer/keys", as(dev.token))).status).toBe(200);
    expect((await call("PATCH", `/customer/members/${dev.memberId}`, { json: { role: "viewer" }, ...as(boss.token) })).status).toBe(200);
    expectErrorShape(await call("GET", "/customer/keys", as(dev.token)), 401, "unauthorized");
    const again = await call("POST", "/auth/login", { json: { email: dev.email, password: GOOD_PASSWORD }, service });
    expect(again.body.role).toBe("viewer");
    expect((await call("GET", "/customer/keys", as(again.body.token))).status).toBe(200);
    expect((await call("DELETE", `/customer/members/${dev.memberId}`, as(boss.token))).status).toBe(200);
    expectErrorShape(await call("GET", "/customer/keys", as(again.body.token)), 401, "unauthorized");
    // With no tenant left, login has nothing to open.
    expectErrorShape(await call("POST", "/auth/login", { json: { email: dev.email, password: GOOD_PASSWORD }, service }), 401, "unauthorized");
    // Another tenant's member id, and a removed one: 404.
    const other = await owner();
    expectErrorShape(await call("DELETE", `/customer/members/${other.memberId}`, as(boss.token)), 404, "not_found");
    expectErrorShape(await call("PATCH", `/customer/members/${dev.memberId}`, { json: { role: "admin" }, ...as(boss.token) }), 404, "not_found");
    expectErrorShape(await call("PATCH", `/customer/members/mbr_x`, { json: { role: "superuser" }, ...as(boss.token) }), 400, "invalid_request");
  });

  test("another instance on the same database refuses the changed member's session on its very next request", async () => {
    const { createService } = await import("../../src/app/service.ts");
    const { testConfig } = await import("../helpers/service.ts");
    const { createLogger } = await import("../../src/log.ts");
    const other = await createService(testConfig(), { db: service.deps.db, log: createLogger("silent") });
    try {
      const boss = await owner();
      const dev = await joined(boss.token, "developer");
      expect((await call("GET", "/customer/keys", { headers: bearer(dev.token), service: other })).status).toBe(200);
      expect((await call("PATCH", `/customer/members/${dev.memberId}`, { json: { role: "admin" }, ...as(boss.token) })).status).toBe(200);
      expectErrorShape(await call("GET", "/customer/keys", { headers: bearer(dev.token), service: other }), 401, "unauthorized");
    } finally {
      await other.close();
    }
  });

  test("anyone may leave", async () => {
    const boss = await owner();
    const viewer = await joined(boss.token, "viewer");
    expect((await call("DELETE", `/customer/members/${viewer.memberId}`, as(viewer.token))).status).toBe(200);
    expect((await call("GET", "/customer/members", as(boss.token))).body.members).toHaveLength(1);
  });

  test("a person removed may be invited again and join again; the tenant list follows each step", async () => {
    const boss = await owner();
    const other = await owner();
    const tenantsOf = async (token: string) => (await call("GET", "/auth/tenants", as(token))).body.tenants.map((t: { tenant_id: string }) => t.tenant_id);
    const accept = async () => {
      const { token } = await invited(boss.token, other.email, "viewer");
      const reply = await call("POST", "/auth/invitations/accept", { json: { token }, ...as(other.token) });
      expect(reply.status).toBe(200);
      return reply.body.member_id as string;
    };
    const first = await accept();
    expect(await tenantsOf(other.token)).toEqual([other.tenantId, boss.tenantId]);
    expect((await call("DELETE", `/customer/members/${first}`, as(boss.token))).status).toBe(200);
    expect(await tenantsOf(other.token)).toEqual([other.tenantId]);
    const second = await accept();
    expect(second).not.toBe(first);
    expect(await tenantsOf(other.token)).toEqual([other.tenantId, boss.tenantId]);
  });
});

describe("a person with an account and no session", () => {
  test("removed from their only tenant, they cannot log in, and join again when invited, with their own password", async () => {
    const boss = await owner();
    const dev = await joined(boss.token, "developer");
    expect((await call("DELETE", `/customer/members/${dev.memberId}`, as(boss.token))).status).toBe(200);
    expectErrorShape(await call("POST", "/auth/login", { json: { email: dev.email, password: GOOD_PASSWORD }, service }), 401, "unauthorized");

    const { token } = await invited(boss.token, dev.email, "viewer");
    // The link's page learns that the email has an account, so it asks for that account's password.
    const preview = await call("POST", "/auth/invitations/preview", { json: { token }, service });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ ok: true, email: dev.email, role: "viewer", account_exists: true, mfa_required: false });
    // A wrong password is a login's refusal; the invitation stays pending.
    expectErrorShape(await call("POST", "/auth/invitations/accept", { json: { token, password: "not the password at all" }, service }), 401, "unauthorized");
    expect((await call("GET", "/customer/members/invitations", as(boss.token))).body.invitations[0].status).toBe("pending");

    const accepted = await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD }, service });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ tenant_id: boss.tenantId, role: "viewer" });
    expect(accepted.body.member_id).not.toBe(dev.memberId);
    expect((await call("GET", "/customer/account", as(accepted.body.token))).body).toMatchObject({ email: dev.email, role: "viewer" });
    // The same person, the same password: login works again.
    expect((await call("POST", "/auth/login", { json: { email: dev.email, password: GOOD_PASSWORD }, service })).body.tenant_id).toBe(boss.tenantId);
    // Used: the preview says so as the acceptance does.
    expectErrorShape(await call("POST", "/auth/invitations/preview", { json: { token }, service }), 400, "token_used");
  });

  test("an account with a second factor accepts with its password and a code; without a good code nothing joins", async () => {
    const boss = await owner();
    const other = await owner();
    const secret = (await call("POST", "/customer/account/mfa/enroll", { json: {}, ...as(other.token) })).body.secret as string;
    const confirmed = await call("POST", "/customer/account/mfa/confirm", { json: { code: await generate({ secret }) }, ...as(other.token) });
    const [recovery] = confirmed.body.recovery_codes as string[];
    const { token } = await invited(boss.token, other.email, "approver");
    expect((await call("POST", "/auth/invitations/preview", { json: { token }, service })).body).toMatchObject({ account_exists: true, mfa_required: true });
    expectErrorShape(await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD }, service }), 401, "invalid_code");
    expectErrorShape(await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD, code: "000000" }, service }), 401, "invalid_code");
    expect((await call("GET", "/customer/members/invitations", as(boss.token))).body.invitations[0].status).toBe("pending");
    // The TOTP code of this 30 s step was spent by the confirmation: a recovery code serves.
    const accepted = await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD, code: recovery }, service });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ tenant_id: boss.tenantId, role: "approver" });
  });

  test("a new person's link previews as no account; unknown and revoked links are invalid_token", async () => {
    const boss = await owner();
    const email = uniqueEmail("new");
    const { token, invitationId } = await invited(boss.token, email, "developer");
    expect((await call("POST", "/auth/invitations/preview", { json: { token }, service })).body).toEqual({
      ok: true, invitation_id: invitationId, email, role: "developer", expires_at: expect.any(String), account_exists: false, mfa_required: false,
    });
    expectErrorShape(await call("POST", "/auth/invitations/preview", { json: { token: "nope" }, service }), 400, "invalid_token");
    expect((await call("POST", `/customer/members/invitations/${invitationId}/revoke`, as(boss.token))).status).toBe(200);
    expectErrorShape(await call("POST", "/auth/invitations/preview", { json: { token }, service }), 400, "invalid_token");
  });
});

describe("settings", () => {
  test("require_mfa: a member without a second factor may only enrol one (and mind their account)", async () => {
    const boss = await owner();
    const dev = await joined(boss.token, "developer");
    const refused = await call("PUT", "/customer/settings", { json: { require_mfa: true }, ...as(dev.token) });
    expectErrorShape(refused, 403, "forbidden_role");
    // An owner without a second factor of their own cannot require one.
    expectErrorShape(await call("PUT", "/customer/settings", { json: { require_mfa: true }, ...as(boss.token) }), 403, "mfa_enrollment_required");
    const secret = (await call("POST", "/customer/account/mfa/enroll", { json: {}, ...as(boss.token) })).body.secret as string;
    expect((await call("POST", "/customer/account/mfa/confirm", { json: { code: await generate({ secret }) }, ...as(boss.token) })).status).toBe(200);
    const set = await call("PUT", "/customer/settings", { json: { require_mfa: true }, ...as(boss.token) });
    expect(set.body).toEqual({ ok: true, settings: { require_mfa: true, allow_self_approval: false, revoke_keys_on_member_removal: false } });
    expectErrorShape(await call("GET", "/customer/keys", as(dev.token)), 403, "mfa_enrollment_required");
    expect((await call("GET", "/customer/account", as(dev.token))).status).toBe(200);
    expect((await call("POST", "/customer/account/mfa/enroll", { json: {}, ...as(dev.token) })).status).toBe(200);
    expect((await call("GET", "/customer/keys", as(boss.token))).status).toBe(200);
    expectErrorShape(await call("PUT", "/customer/settings", { json: { require_mfa: "yes" }, ...as(boss.token) }), 400, "invalid_request");
  });
});
