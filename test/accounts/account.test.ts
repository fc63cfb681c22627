// GET /customer/account and POST /customer/account/password.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Service } from "../../src/app/service.ts";
import { bearer, requestResetToken, signupWithMail } from "../helpers/accounts.ts";
import { mailService, startInbox, type Inbox } from "../helpers/mail.ts";
import { call, expectErrorShape, signup, testService, uniqueEmail } from "../helpers/service.ts";

const login = (email: string, password: string) => call("POST", "/auth/login", { json: { email, password } });
const account = (token: string) => call("GET", "/customer/account", { headers: bearer(token) });
const change = (token: string, current_password: string, new_password: string) =>
  call("POST", "/customer/account/password", { json: { current_password, new_password }, headers: bearer(token) });
const NEW_PASSWORD = "a brand new passphrase";

describe("GET /customer/account", () => {
  test("shows the tenant, its email, verification, plan and creation time", async () => {
    const user = await signup(uniqueEmail("Account").toUpperCase());
    const reply = await account(user.token);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      ok: true,
      tenant_id: user.tenantId,
      member_id: user.memberId,
      role: "owner",
      email: user.email.toLowerCase(),
      email_verified: false,
      plan: "free",
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      mfa_enabled: false,
    });
  });

  test("needs a JWT; an API key is not one", async () => {
    const user = await signup();
    expectErrorShape(await call("GET", "/customer/account"), 401, "unauthorized");
    expectErrorShape(await account(user.apiKey), 401, "unauthorized");
    expectErrorShape(await call("GET", "/customer/account", { headers: { "x-api-key": user.apiKey } }), 401, "unauthorized");
  });
});

describe("POST /customer/account/password", () => {
  test("changes the password, ends every other session, and returns a fresh one", async () => {
    const user = await signup();
    const other = (await login(user.email, user.password)).body.token as string;
    const reply = await change(user.token, user.password, NEW_PASSWORD);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ok: true, token: expect.any(String), expires_at: expect.any(String) });

    expectErrorShape(await account(other), 401, "unauthorized");
    expectErrorShape(await account(user.token), 401, "unauthorized");
    expect((await account(reply.body.token)).status).toBe(200);
    expectErrorShape(await login(user.email, user.password), 401, "unauthorized");
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200);
  });

  test("a wrong current password is 401 and changes nothing", async () => {
    const user = await signup();
    expectErrorShape(await change(user.token, "not the password", NEW_PASSWORD), 401, "unauthorized");
    expect((await account(user.token)).status).toBe(200);
    expect((await login(user.email, user.password)).status).toBe(200);
  });

  test("the new password follows the password rules", async () => {
    const user = await signup();
    expectErrorShape(await change(user.token, user.password, "short"), 400, "password_too_short");
    expectErrorShape(await change(user.token, user.password, "x".repeat(257)), 400, "password_too_long");
    expectErrorShape(await change(user.token, user.password, "iloveyou"), 400, "password_too_common");
    expect((await account(user.token)).status).toBe(200);
  });

  test("needs a JWT and exactly the two fields", async () => {
    const user = await signup();
    expectErrorShape(await call("POST", "/customer/account/password", { json: { current_password: user.password, new_password: NEW_PASSWORD } }), 401, "unauthorized");
    expectErrorShape(await call("POST", "/customer/account/password", { json: { new_password: NEW_PASSWORD }, headers: bearer(user.token) }), 400, "invalid_request");
    expectErrorShape(
      await call("POST", "/customer/account/password", { json: { current_password: user.password, new_password: NEW_PASSWORD, tenant_id: "x" }, headers: bearer(user.token) }),
      400,
      "invalid_request",
    );
  });

  test("bcrypt's 72-byte limit: a new password sharing its first 72 bytes with another stays distinct", async () => {
    const head = "p".repeat(72);
    const user = await signup();
    const reply = await change(user.token, user.password, `${head}-one`);
    expect(reply.status).toBe(200);
    expectErrorShape(await login(user.email, `${head}-two`), 401, "unauthorized");
    expect((await login(user.email, `${head}-one`)).status).toBe(200);
  });

  test("two parallel changes with the same current password: one wins, the other is refused", async () => {
    const user = await signup();
    const replies = await Promise.all([change(user.token, user.password, "first new passphrase"), change(user.token, user.password, "second new passphrase")]);
    const ok = replies.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    // Whichever lost saw its session end or its compare-and-set fail: 401 either way.
    for (const r of replies.filter((r) => r.status !== 200)) expectErrorShape(r, 401, "unauthorized");
    const winners = await Promise.all(["first new passphrase", "second new passphrase"].map((p) => login(user.email, p)));
    expect(winners.filter((r) => r.status === 200)).toHaveLength(1);
  });
});

describe("a password change and pending reset links", () => {
  let inbox: Inbox;
  let service: Service;
  beforeAll(async () => {
    inbox = await startInbox();
    service = await mailService((await testService()).db, { smtpUrl: inbox.url });
  });
  afterAll(async () => {
    await service?.close();
    await inbox?.close();
  });

  test("a change kills reset links sent before it", async () => {
    const user = await signupWithMail(service, inbox);
    const token = await requestResetToken(service, inbox, user.email);
    expect((await change(user.token, user.password, NEW_PASSWORD)).status).toBe(200);
    expect((await call("POST", "/auth/reset-password/validate", { json: { token } })).body).toEqual({ ok: true, valid: false, reason: "invalid_token" });
  });
});

describe("OpenAPI", () => {
  test("documents every lifecycle route, with strict JSON bodies", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const routes: [string, string, string[] | null][] = [
      ["post", "/auth/verify-email/request", null],
      ["post", "/auth/verify-email/confirm", ["token"]],
      ["get", "/auth/verify-email/status", null],
      ["post", "/auth/reset-password/request", ["email"]],
      ["post", "/auth/reset-password/validate", ["token"]],
      ["post", "/auth/reset-password/confirm", ["token", "password"]],
      ["get", "/customer/account", null],
      ["post", "/customer/account/password", ["current_password", "new_password"]],
    ];
    for (const [method, path, required] of routes) {
      const op = doc.paths[path]?.[method];
      expect(op).toBeDefined();
      if (required) {
        const schema = op.requestBody.content["application/json"].schema;
        expect(schema.required).toEqual(required);
        expect(schema.additionalProperties).toBe(false);
      }
    }
  });
});
