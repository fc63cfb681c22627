// Account enumeration: whether an address is registered (or a token ever existed) must not show
// in the status, the body, the headers or the time of login, reset, verification and signup
// answers. Timing: the medians of 50 interleaved calls of each kind within 10 ms.
//
// Signup is the one place docs/api.md itself tells a taken address apart (409 email_taken); what
// it must not do is answer faster or differently for it in any other way: every refusal that
// comes before the address is looked at is the same for a taken and a free address.
import { beforeAll, describe, expect, test } from "bun:test";
import type { Service } from "../../src/app/service.ts";
import { bearer, signupWithMail } from "../helpers/accounts.ts";
import { mailService, startInbox } from "../helpers/mail.ts";
import { call, GOOD_PASSWORD, logLines, signup, testService, uniqueEmail, type Reply } from "../helpers/service.ts";
import { comparable, expectMediansWithin, expectNoSecretIn, remember, timePair } from "./helpers.ts";

const CALLS = 50;
const WITHIN_MS = 10;

let registered: Awaited<ReturnType<typeof signup>>;
/** A verification token that was real and has been superseded since. */
let staleVerifyToken: string;
/** A session of an account whose email is verified. */
let verifiedToken: string;

beforeAll(async () => {
  registered = await signup();
  for (const s of [registered.password, registered.token, registered.apiKey]) remember(s);
  // Real verification mail, before the timing tests queue more of it.
  const inbox = await startInbox();
  const { db } = await testService();
  const mailer: Service = await mailService(db, { smtpUrl: inbox.url });
  try {
    const [stale, verified] = await Promise.all([signupWithMail(mailer, inbox, undefined, "enum-stale"), signupWithMail(mailer, inbox, undefined, "enum-verified")]);
    for (const s of [stale.token, stale.apiKey, stale.verifyToken, verified.token, verified.apiKey, verified.verifyToken]) remember(s);
    expect((await call("POST", "/auth/verify-email/request", { headers: bearer(stale.token) })).status).toBe(202);
    expect((await call("POST", "/auth/verify-email/confirm", { json: { token: verified.verifyToken } })).status).toBe(200);
    staleVerifyToken = stale.verifyToken;
    verifiedToken = verified.token;
  } finally {
    await mailer.close();
    await inbox.close();
  }
}, 60_000);

function expectSameAnswers(a: Reply[], b: Reply[]): void {
  const first = comparable(a[0]);
  for (const reply of [...a, ...b]) expect(comparable(reply)).toEqual(first);
}

describe(`timing and answers: ${CALLS} calls each, medians within ${WITHIN_MS} ms`, () => {
  test("login: a wrong password and an unknown email", async () => {
    const password = remember("not the right passphrase");
    const login = (email: string) => () => call("POST", "/auth/login", { json: { email, password } });
    const timed = await timePair(CALLS, login(registered.email), () => login(uniqueEmail("ghost"))());
    expectSameAnswers(timed.replies.a, timed.replies.b);
    expect(timed.replies.a[0].status).toBe(401);
    expectMediansWithin("login", timed, WITHIN_MS);
  });

  test("reset request: a registered and an unknown address", async () => {
    const ask = (email: string) => call("POST", "/auth/reset-password/request", { json: { email } });
    const timed = await timePair(CALLS, () => ask(registered.email), () => ask(uniqueEmail("ghost")));
    expectSameAnswers(timed.replies.a, timed.replies.b);
    expect(timed.replies.a[0].status).toBe(202);
    expectMediansWithin("reset request", timed, WITHIN_MS);
  });

  test("signup: a taken and a free address (409 as documented, but no faster and nothing more)", async () => {
    const password = remember("a fresh signup passphrase");
    const timed = await timePair(
      CALLS,
      () => call("POST", "/auth/signup", { json: { email: registered.email, password } }),
      () => call("POST", "/auth/signup", { json: { email: uniqueEmail("enum"), password } }),
    );
    for (const r of timed.replies.b) for (const s of [r.body.token, r.body.api_key]) remember(s);
    expect(timed.replies.a.every((r) => r.status === 409 && r.body.error === "email_taken")).toBe(true);
    expect(timed.replies.b.every((r) => r.status === 201)).toBe(true);
    // Every taken address gets the very same refusal, which says nothing about the account.
    expectSameAnswers(timed.replies.a, []);
    expect(Object.keys(timed.replies.a[0].body).sort()).toEqual(["error", "message", "ok", "request_id"]);
    expectMediansWithin("signup", timed, WITHIN_MS);
  });

  test("verification confirm: a token that once belonged to an account and one that never existed", async () => {
    const confirm = (token: string) => call("POST", "/auth/verify-email/confirm", { json: { token } });
    const random = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    const timed = await timePair(CALLS, () => confirm(staleVerifyToken), () => confirm(random()));
    expectSameAnswers(timed.replies.a, timed.replies.b);
    expect(timed.replies.a[0].body.error).toBe("invalid_token");
    expectMediansWithin("verification confirm", timed, WITHIN_MS);
  });

  test("verification request: an unverified and a verified account answer alike", async () => {
    const unverified = remember((await signup()).token);
    const ask = (token: string) => call("POST", "/auth/verify-email/request", { headers: bearer(token) });
    const timed = await timePair(CALLS, () => ask(verifiedToken), () => ask(unverified));
    expectSameAnswers(timed.replies.a, timed.replies.b);
    expect(timed.replies.a[0].status).toBe(202);
    expectMediansWithin("verification request", timed, WITHIN_MS);
  });
});

describe("refusals that come before the address is looked at do not depend on it", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["too short", { password: "Zq7#kLm" }, "password_too_short"],
    ["too long", { password: "Zq7#".repeat(64) + "x" }, "password_too_long"],
    ["too common", { password: "password123" }, "password_too_common"],
    ["an unknown field", { password: GOOD_PASSWORD, role: "admin" }, "invalid_request"],
  ];
  for (const [name, fields, error] of cases) {
    test(`signup with a password ${name}`, async () => {
      const taken = await call("POST", "/auth/signup", { json: { email: registered.email, ...fields } });
      const free = await call("POST", "/auth/signup", { json: { email: uniqueEmail("free"), ...fields } });
      expect(taken.body.error).toBe(error);
      expect(comparable(taken)).toEqual(comparable(free));
    });
  }

  test("reset confirm: a live-looking token and a random one answer alike", async () => {
    const a = await call("POST", "/auth/reset-password/validate", { json: { token: "A".repeat(43) } });
    const b = await call("POST", "/auth/reset-password/validate", { json: { token: "not a token" } });
    expect(comparable(a)).toEqual(comparable(b));
    expect(a.body).toEqual({ ok: true, valid: false, reason: "invalid_token" });
  });
});

test("no password, token, JWT or key used here reaches a log line", () => {
  expectNoSecretIn(logLines);
});
