// Password reset end to end through a real SMTP server: the same answer for any address, a
// single-use 24 h token, every earlier session ended, and the other reset links dead.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Service } from "../../src/app/service.ts";
import { bearer, laterService, requestResetToken, signupWithMail } from "../helpers/accounts.ts";
import { closeMailFixture, openMailFixture, type Inbox } from "../helpers/mail.ts";
import { call, expectErrorShape, signup, testService, uniqueEmail } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

let inbox: Inbox;
let service: Service;

beforeAll(async () => ({ inbox, service: service } = await openMailFixture()));
afterAll(() => closeMailFixture({ inbox, service: service }));

const login = (email: string, password: string) => call("POST", "/auth/login", { json: { email, password } });
const account = (token: string) => call("GET", "/customer/account", { headers: bearer(token) });
const validate = (token: string, svc?: Service) => call("POST", "/auth/reset-password/validate", { json: { token }, service: svc });
const confirm = (token: string, password: string, svc?: Service) => call("POST", "/auth/reset-password/confirm", { json: { token, password }, service: svc });
const NEW_PASSWORD = "a brand new passphrase";

describe("POST /auth/reset-password/request", () => {
  test("a registered address gets a reset link; an unknown one the same answer and no mail", async () => {
    const user = await signupWithMail(service, inbox);
    const ghost = uniqueEmail("ghost");
    const known = await call("POST", "/auth/reset-password/request", { json: { email: user.email }, service });
    const unknown = await call("POST", "/auth/reset-password/request", { json: { email: ghost }, service });
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(known.body).toEqual({ ok: true });
    expect(unknown.text).toBe(known.text);
    expect([...unknown.headers.keys()].sort()).toEqual([...known.headers.keys()].sort());

    const [, reset] = await inbox.waitFor(user.email, 2);
    expect(reset.parsed.subject).toMatch(/reset/i);
    expect(reset.parsed.text).toContain("/console/reset?token=");
    // Give the worker time to have sent anything it would send for the ghost.
    await call("POST", "/auth/reset-password/request", { json: { email: user.email }, service });
    await inbox.waitFor(user.email, 3);
    expect(inbox.to(ghost)).toEqual([]);
    const { db } = await testService();
    expect(await testQuery(db, "mail_outbox", [ghost])).toEqual([]);
  });

  test("the address is matched case- and space-insensitively; a malformed one is just unknown", async () => {
    const user = await signupWithMail(service, inbox);
    expect((await call("POST", "/auth/reset-password/request", { json: { email: `  ${user.email.toUpperCase()} ` }, service })).status).toBe(202);
    await inbox.waitFor(user.email, 2);
    for (const email of ["", "not an email", "@"]) {
      const reply = await call("POST", "/auth/reset-password/request", { json: { email } });
      expect(reply.status).toBe(202);
    }
    expectErrorShape(await call("POST", "/auth/reset-password/request", { json: {} }), 400, "invalid_request");
    expectErrorShape(await call("POST", "/auth/reset-password/request", { json: { email: user.email, admin: true } }), 400, "invalid_request");
  });

  test("known and unknown addresses take the same time (median of 30 each, within 10 ms)", async () => {
    // On the shared service, whose requests only queue mail: what is measured is the request
    // itself, which never waits for sending.
    const user = await signup();
    const samples: Record<"known" | "unknown", number[]> = { known: [], unknown: [] };
    const ask = async (kind: "known" | "unknown") => {
      const started = performance.now();
      const reply = await call("POST", "/auth/reset-password/request", { json: { email: kind === "known" ? user.email : uniqueEmail("ghost") } });
      samples[kind].push(performance.now() - started);
      expect(reply.status).toBe(202);
      return reply.text;
    };
    for (let i = 0; i < 3; i++) await Promise.all([ask("known"), ask("unknown")]); // warm up
    samples.known = [];
    samples.unknown = [];
    for (let i = 0; i < 30; i++) {
      // Alternate the order so neither side always runs right after the other.
      if (i % 2) {
        expect(await ask("known")).toBe(await ask("unknown"));
      } else {
        expect(await ask("unknown")).toBe(await ask("known"));
      }
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    expect(Math.abs(median(samples.known) - median(samples.unknown))).toBeLessThan(10);
  });
});

describe("POST /auth/reset-password/validate and /confirm", () => {
  test("happy path: valid, then confirm sets the password, ends old sessions, and the token is used", async () => {
    const user = await signupWithMail(service, inbox);
    const token = await requestResetToken(service, inbox, user.email);
    expect((await validate(token)).body).toEqual({ ok: true, valid: true });

    const done = await confirm(token, NEW_PASSWORD);
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ ok: true });

    // Every JWT issued before the reset stops working.
    expectErrorShape(await account(user.token), 401, "unauthorized");
    expectErrorShape(await login(user.email, user.password), 401, "unauthorized");
    const fresh = await login(user.email, NEW_PASSWORD);
    expect(fresh.status).toBe(200);
    expect((await account(fresh.body.token)).status).toBe(200);

    expect((await validate(token)).body).toEqual({ ok: true, valid: false, reason: "token_used" });
    expectErrorShape(await confirm(token, "yet another passphrase"), 400, "token_used");
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200);
  });

  test("completing one reset kills the other reset links", async () => {
    const user = await signupWithMail(service, inbox);
    const first = await requestResetToken(service, inbox, user.email);
    const second = await requestResetToken(service, inbox, user.email);
    expect(first).not.toBe(second);
    expect((await validate(first)).body.valid).toBe(true);
    expect((await confirm(second, NEW_PASSWORD)).status).toBe(200);
    expect((await validate(first)).body).toEqual({ ok: true, valid: false, reason: "invalid_token" });
    expectErrorShape(await confirm(first, "someone else's choice"), 400, "invalid_token");
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200);
  });

  test("a token older than 24 hours is token_expired for validate and confirm", async () => {
    const user = await signupWithMail(service, inbox);
    const token = await requestResetToken(service, inbox, user.email);
    const later = await laterService(24 * 3600_000 + 1000);
    try {
      expect((await validate(token, later)).body).toEqual({ ok: true, valid: false, reason: "token_expired" });
      expectErrorShape(await confirm(token, NEW_PASSWORD, later), 400, "token_expired");
    } finally {
      await later.close();
    }
    // Nothing changed: the old password still works, and so does the token before its 24 h.
    expect((await login(user.email, user.password)).status).toBe(200);
    expect((await validate(token)).body.valid).toBe(true);
  });

  test("unknown tokens and verification tokens are invalid_token", async () => {
    const user = await signupWithMail(service, inbox);
    for (const token of ["", "nope", user.verifyToken, "A".repeat(43)]) {
      expect((await validate(token)).body).toEqual({ ok: true, valid: false, reason: "invalid_token" });
      expectErrorShape(await confirm(token, NEW_PASSWORD), 400, "invalid_token");
    }
    expectErrorShape(await call("POST", "/auth/reset-password/validate", { json: { token: 42 } }), 400, "invalid_request");
    expectErrorShape(await call("POST", "/auth/reset-password/confirm", { json: { token: "x" } }), 400, "invalid_request");
  });

  test("the new password follows the password rules, and a refused one leaves the token usable", async () => {
    const user = await signupWithMail(service, inbox);
    const token = await requestResetToken(service, inbox, user.email);
    expectErrorShape(await confirm(token, "Zq7#kLm"), 400, "password_too_short");
    expectErrorShape(await confirm(token, "Zq7#".repeat(64) + "x"), 400, "password_too_long");
    expectErrorShape(await confirm(token, "password123"), 400, "password_too_common");
    expect((await validate(token)).body.valid).toBe(true);
    expect((await account(user.token)).status).toBe(200);
    expect((await confirm(token, "Zq7#kLm!")).status).toBe(200);
  });

  test("20 parallel confirms of one token: exactly one succeeds", async () => {
    const user = await signupWithMail(service, inbox);
    const token = await requestResetToken(service, inbox, user.email);
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => confirm(token, `parallel passphrase ${i}`)));
    const winners = replies.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200)) expectErrorShape(r, 400, "token_used");
  });

  test("a completed reset also proves the address: the email counts as verified", async () => {
    const user = await signupWithMail(service, inbox);
    const token = await requestResetToken(service, inbox, user.email);
    expect((await confirm(token, NEW_PASSWORD)).status).toBe(200);
    const session = (await login(user.email, NEW_PASSWORD)).body.token;
    expect((await call("GET", "/auth/verify-email/status", { headers: bearer(session) })).body.email_verified).toBe(true);
  });
});

describe("bcrypt's 72-byte limit", () => {
  // bcrypt itself reads only the first 72 bytes; two passwords that share them must still differ.
  const head = "é".repeat(36); // 72 bytes of UTF-8
  const one = `${head}first`;
  const two = `${head}second`;

  test("signup and login: a password sharing the first 72 bytes does not log in", async () => {
    const user = await signup(uniqueEmail("bcrypt"), one);
    expect((await login(user.email, one)).status).toBe(200);
    expectErrorShape(await login(user.email, two), 401, "unauthorized");
    expectErrorShape(await login(user.email, head), 401, "unauthorized");
  });

  test("reset: the same holds for a password set from a reset link", async () => {
    const user = await signupWithMail(service, inbox);
    const token = await requestResetToken(service, inbox, user.email);
    expect((await confirm(token, two)).status).toBe(200);
    expect((await login(user.email, two)).status).toBe(200);
    expectErrorShape(await login(user.email, one), 401, "unauthorized");
  });
});
