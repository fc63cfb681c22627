// Security events: one JSON line per event with tenant, client address, request id and time,
// and not one secret anywhere in the log. The test walks every flow with known secrets, then
// scans every captured line (this file's services and the shared one) for each of them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { bearer, requestResetToken, signupWithMail } from "../helpers/accounts.ts";
import { mailService, startInbox, type Inbox } from "../helpers/mail.ts";
import { call, GOOD_PASSWORD, logLines, subjectOf, testConfig, testService, uniqueEmail } from "../helpers/service.ts";

const lines: string[] = [];
let inbox: Inbox;
let service: Service;
let limited: Service;

beforeAll(async () => {
  const { db } = await testService();
  inbox = await startInbox();
  service = await mailService(db, { smtpUrl: inbox.url }, lines);
  limited = await createService(testConfig({ rateLimits: { authAddress: { limit: 1, windowSeconds: 60 }, authNetwork: { limit: 100, windowSeconds: 60 }, loginPair: { limit: 100, windowSeconds: 60 }, loginEmail: { limit: 100, windowSeconds: 60 }, mailEmail: { limit: 100, windowSeconds: 60 } } }), {
    db,
    log: createLogger("info", (l) => lines.push(l)),
  });
});
afterAll(async () => {
  await Promise.all([service?.close(), limited?.close()]);
  await inbox?.close();
});

test("every flow logs its event, and no line carries a password, token, key or full email", async () => {
  const ip = "203.0.113.77";
  // GOOD_PASSWORD is what every other test signs up with; their lines are in logLines.
  const secrets: string[] = [GOOD_PASSWORD];
  const password = "first secret passphrase";
  const user = await signupWithMail(service, inbox, password, "audit");
  secrets.push(password, user.token, user.apiKey, user.verifyToken, user.email);

  const wrong = "wrong secret passphrase";
  await call("POST", "/auth/login", { json: { email: user.email, password: wrong }, ip, service });
  secrets.push(wrong);
  const ghostEmail = uniqueEmail("audit-ghost");
  await call("POST", "/auth/login", { json: { email: ghostEmail, password: wrong }, ip, service });
  secrets.push(ghostEmail);
  const session = (await call("POST", "/auth/login", { json: { email: user.email, password }, ip, service })).body.token as string;
  secrets.push(session);

  expect((await call("POST", "/auth/verify-email/request", { headers: bearer(session), ip, service })).status).toBe(202);
  const [, second] = await inbox.waitFor(user.email, 2);
  const secondToken = /token=([A-Za-z0-9_-]+)/.exec(second.parsed.text ?? "")![1];
  secrets.push(secondToken);
  expect((await call("POST", "/auth/verify-email/confirm", { json: { token: secondToken }, ip, service })).status).toBe(200);
  await call("POST", "/auth/verify-email/confirm", { json: { token: secondToken }, ip, service });

  const resetToken = await requestResetToken(service, inbox, user.email);
  secrets.push(resetToken);
  await call("POST", "/auth/reset-password/request", { json: { email: ghostEmail }, ip, service });
  const resetPassword = "second secret passphrase";
  secrets.push(resetPassword);
  expect((await call("POST", "/auth/reset-password/confirm", { json: { token: resetToken, password: resetPassword }, ip, service })).status).toBe(200);
  await call("POST", "/auth/reset-password/confirm", { json: { token: resetToken, password: resetPassword }, ip, service });

  const fresh = (await call("POST", "/auth/login", { json: { email: user.email, password: resetPassword }, ip, service })).body.token as string;
  const changed = "third secret passphrase";
  secrets.push(fresh, changed);
  await call("POST", "/customer/account/password", { json: { current_password: wrong, new_password: changed }, headers: bearer(fresh), ip, service });
  const change = await call("POST", "/customer/account/password", { json: { current_password: resetPassword, new_password: changed }, headers: bearer(fresh), ip, service });
  expect(change.status).toBe(200);
  secrets.push(change.body.token);

  // Random, because a server database keeps the counter between runs.
  const group = Math.floor(Math.random() * 0xffff).toString(16);
  const limitedIp = `2001:DB8:77:${group}::1`;
  await call("POST", "/auth/login", { json: { email: user.email, password: changed }, ip: limitedIp, service: limited });
  expect((await call("POST", "/auth/login", { json: { email: user.email, password: changed }, ip: limitedIp, service: limited })).status).toBe(429);

  const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  // What happens to a person before or apart from a session (a login, a link from a mail) names the
  // person (account_id); what happens in a session names its tenant too.
  const accountId = subjectOf(user.token).account_id;
  const tenant = { tenant_id: user.tenantId };
  const person = { tenant_id: null, account_id: accountId };
  const nobody = { tenant_id: null, account_id: undefined };
  const expected: [string, Record<string, string | null | undefined>][] = [
    ["auth.signup", { ...tenant, member_id: user.memberId }],
    ["auth.login_failed", person],
    ["auth.login_failed", nobody],
    ["auth.login_succeeded", { ...tenant, member_id: user.memberId }],
    ["auth.verification_requested", tenant],
    ["auth.email_verified", person],
    ["auth.verification_failed", nobody],
    ["auth.reset_requested", { ...tenant, account_id: accountId }],
    ["auth.reset_requested", nobody],
    ["auth.reset_completed", person],
    ["auth.reset_failed", nobody],
    ["auth.password_change_failed", tenant],
    ["auth.password_changed", { ...tenant, account_id: accountId }],
    ["auth.rate_limited", nobody],
  ];
  for (const [event, fields] of expected) {
    const match = events.find((e) => e.event === event && Object.entries(fields).every(([name, value]) => e[name] === value));
    if (!match) throw new Error(`no ${event} line with ${JSON.stringify(fields)}`);
    expect(match.time).toMatch(/Z$/);
    expect(match.request_id).toMatch(/^req_/);
    expect("ip" in match).toBe(true);
  }
  // The client address is the one the request came from (an IPv6 one as its normal form).
  expect(events.find((e) => e.event === "auth.login_succeeded")?.ip).toBe(ip);
  expect(events.find((e) => e.event === "auth.rate_limited")?.ip).toBe(`2001:db8:77:${group}:0:0:0:1`);
  // The email shows only masked.
  const failed = events.find((e) => e.event === "auth.login_failed" && e.tenant_id === null && e.account_id === undefined)!;
  expect(failed.email).toBe(`${ghostEmail[0]}***@example.com`);
  expect(failed.reason).toBe("unknown_email");

  const everything = [...lines, ...logLines];
  expect(everything.length).toBeGreaterThan(events.length);
  for (const secret of secrets) {
    for (const line of everything) {
      if (line.includes(secret)) throw new Error(`a log line carries a secret: ${line.slice(0, 200)}`);
    }
  }
});
