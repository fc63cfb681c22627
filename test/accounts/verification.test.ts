// Email verification end to end: signup mails a link through a real SMTP server, the token from
// the link confirms the address once, within 24 h, and a new request retires the old link.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashSecret } from "../../src/keys/secret.ts";
import type { Service } from "../../src/app/service.ts";
import { bearer, laterService, signupWithMail as signupMailed } from "../helpers/accounts.ts";
import { closeMailFixture, linkToken, openMailFixture, type Inbox } from "../helpers/mail.ts";
import { call, expectErrorShape, subjectOf, testService } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

let inbox: Inbox;
let service: Service;

beforeAll(async () => ({ inbox, service: service } = await openMailFixture()));
afterAll(() => closeMailFixture({ inbox, service: service }));

async function signupWithMail() {
  const user = await signupMailed(service, inbox, undefined, "verify");
  return { ...user, link: user.verifyToken };
}

describe("verification email after signup", () => {
  test("arrives with a text and an HTML part, a link ending in ?token=, and nothing else token-like", async () => {
    const { email, link, mail } = await signupWithMail();
    expect(mail.parsed.subject).toMatch(/confirm/i);
    expect(mail.parsed.to && "text" in mail.parsed.to ? mail.parsed.to.text : "").toContain(email);
    expect(link).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The only long random-looking string in either part is the token itself.
    for (const part of [mail.parsed.text ?? "", String(mail.parsed.html)]) {
      const tokenish = part.match(/[A-Za-z0-9_-]{20,}/g) ?? [];
      expect(new Set(tokenish)).toEqual(new Set([link]));
    }
  });

  test("the status starts unverified, confirm verifies once, status shows the time", async () => {
    const user = await signupWithMail();
    const before = await call("GET", "/auth/verify-email/status", { headers: bearer(user.token) });
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ ok: true, email: user.email, email_verified: false, verified_at: null });

    const confirmed = await call("POST", "/auth/verify-email/confirm", { json: { token: user.link } });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ ok: true, email_verified: true });

    const after = await call("GET", "/auth/verify-email/status", { headers: bearer(user.token) });
    expect(after.body.email_verified).toBe(true);
    expect(after.body.verified_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const account = await call("GET", "/customer/account", { headers: bearer(user.token) });
    expect(account.body.email_verified).toBe(true);
  });

  test("a used token gets token_used", async () => {
    const user = await signupWithMail();
    expect((await call("POST", "/auth/verify-email/confirm", { json: { token: user.link } })).status).toBe(200);
    expectErrorShape(await call("POST", "/auth/verify-email/confirm", { json: { token: user.link } }), 400, "token_used");
  });

  test("unknown, mangled or empty tokens get invalid_token; a reset token is not a verification token", async () => {
    for (const token of ["", "x", "A".repeat(43), "not a token at all"]) {
      expectErrorShape(await call("POST", "/auth/verify-email/confirm", { json: { token } }), 400, "invalid_token");
    }
    expectErrorShape(await call("POST", "/auth/verify-email/confirm", { json: {} }), 400, "invalid_request");
    expectErrorShape(await call("POST", "/auth/verify-email/confirm", { json: { token: "x", extra: 1 } }), 400, "invalid_request");
    const user = await signupWithMail();
    await call("POST", "/auth/reset-password/request", { json: { email: user.email }, service });
    const [, reset] = await inbox.waitFor(user.email, 2);
    expectErrorShape(await call("POST", "/auth/verify-email/confirm", { json: { token: linkToken(reset, "/console/reset") } }), 400, "invalid_token");
  });

  test("a token older than 24 hours gets token_expired; a request sends a working one", async () => {
    const user = await signupWithMail();
    const later = await laterService(24 * 3600_000 + 1000);
    try {
      expectErrorShape(await call("POST", "/auth/verify-email/confirm", { json: { token: user.link }, service: later }), 400, "token_expired");
    } finally {
      await later.close();
    }
    // A new link works until just before its own 24 h are up.
    expect((await call("POST", "/auth/verify-email/request", { headers: bearer(user.token), service })).status).toBe(202);
    const [, second] = await inbox.waitFor(user.email, 2);
    const almost = await laterService(24 * 3600_000 - 60_000);
    try {
      expect((await call("POST", "/auth/verify-email/confirm", { json: { token: linkToken(second, "/console/verify") }, service: almost })).status).toBe(200);
    } finally {
      await almost.close();
    }
  });

  test("a new request makes the older token stop working", async () => {
    const user = await signupWithMail();
    const reply = await call("POST", "/auth/verify-email/request", { headers: bearer(user.token), service });
    expect(reply.status).toBe(202);
    expect(reply.body).toEqual({ ok: true });
    const [, second] = await inbox.waitFor(user.email, 2);
    const fresh = linkToken(second, "/console/verify");
    expect(fresh).not.toBe(user.link);
    expectErrorShape(await call("POST", "/auth/verify-email/confirm", { json: { token: user.link } }), 400, "invalid_token");
    expect((await call("POST", "/auth/verify-email/confirm", { json: { token: fresh } })).status).toBe(200);
  });

  test("request takes {} or no body, refuses other fields, and needs a JWT", async () => {
    const user = await signupWithMail();
    expect((await call("POST", "/auth/verify-email/request", { headers: bearer(user.token), json: {}, service })).status).toBe(202);
    expect((await call("POST", "/auth/verify-email/request", { headers: bearer(user.token), service })).status).toBe(202);
    expectErrorShape(await call("POST", "/auth/verify-email/request", { headers: bearer(user.token), json: { email: "x@example.com" } }), 400, "invalid_request");
    expectErrorShape(await call("POST", "/auth/verify-email/request"), 401, "unauthorized");
    expectErrorShape(await call("GET", "/auth/verify-email/status"), 401, "unauthorized");
    expectErrorShape(await call("GET", "/auth/verify-email/status", { headers: bearer("not.a.jwt") }), 401, "unauthorized");
  });

  test("once verified, a request answers the same and sends nothing", async () => {
    const user = await signupWithMail();
    expect((await call("POST", "/auth/verify-email/confirm", { json: { token: user.link } })).status).toBe(200);
    expect((await call("POST", "/auth/verify-email/request", { headers: bearer(user.token), service })).status).toBe(202);
    const { db } = await testService();
    const rows = await testQuery<{ kind: string }>(db, "mail_outbox", [user.email]);
    expect(rows.map((r) => r.kind)).toEqual(["verify_email"]);
  });

  test("20 parallel confirms of one token: exactly one succeeds, the rest get token_used", async () => {
    const user = await signupWithMail();
    const replies = await Promise.all(Array.from({ length: 20 }, () => call("POST", "/auth/verify-email/confirm", { json: { token: user.link } })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200)) expectErrorShape(r, 400, "token_used");
  });

  test("only the SHA-256 of a token is stored, and the sent message's data is emptied", async () => {
    const user = await signupWithMail();
    const { db } = await testService();
    const tokens = await testQuery<{ token_hash: string; purpose: string; status: string; created_at: string; expires_at: string }>(db, "auth_tokens", [subjectOf(user.token).account_id]);
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({ token_hash: await hashSecret(user.link), purpose: "verify_email", status: "active" });
    expect(Date.parse(tokens[0].expires_at) - Date.parse(tokens[0].created_at)).toBe(24 * 3600_000);
    // The SMTP server has the message a moment before the worker records it as sent.
    const rows = () => testQuery<{ status: string; data: unknown }>(db, "mail_outbox", [user.email]);
    for (let i = 0; i < 500 && (await rows())[0]?.status !== "sent"; i++) await Bun.sleep(10);
    const outbox = await rows();
    expect(outbox).toEqual([expect.objectContaining({ status: "sent", data: {} })]);
    expect(JSON.stringify(outbox)).not.toContain(user.link);
  });
});
