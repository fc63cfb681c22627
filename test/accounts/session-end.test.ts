// Sign-out (POST /auth/logout) ends this token, or with all: true every token of the account,
// at once and on every instance; a completed reset clears the email's login counts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Service } from "../../src/app/service.ts";
import { createService } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { bearer, requestResetToken } from "../helpers/accounts.ts";
import { mailService, startInbox, type Inbox } from "../helpers/mail.ts";
import { call, expectErrorShape, signup, testConfig, testService, uniqueEmail } from "../helpers/service.ts";

const account = (token: string, service?: Service) => call("GET", "/customer/account", { headers: bearer(token), service });
const login = (email: string, password: string, ip?: string, service?: Service) => call("POST", "/auth/login", { json: { email, password }, ip, service });

describe("POST /auth/logout", () => {
  let other: Service;
  beforeAll(async () => {
    const { db } = await testService();
    other = await createService(testConfig(), { db, log: createLogger("silent") });
  });
  afterAll(() => other.close());

  test("this token stops working at once, on another instance too; the account's other sessions go on", async () => {
    const user = await signup();
    const second = (await login(user.email, user.password)).body.token as string;
    expect((await account(user.token, other)).status).toBe(200);
    const out = await call("POST", "/auth/logout", { json: {}, headers: bearer(user.token) });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ ok: true });
    expectErrorShape(await account(user.token), 401, "unauthorized");
    expectErrorShape(await account(user.token, other), 401, "unauthorized");
    expect((await account(second, other)).status).toBe(200);
    // Signing out twice: the token is already dead.
    expectErrorShape(await call("POST", "/auth/logout", { json: {}, headers: bearer(user.token) }), 401, "unauthorized");
  });

  test("no body works like {}", async () => {
    const user = await signup();
    expect((await call("POST", "/auth/logout", { headers: bearer(user.token) })).status).toBe(200);
    expectErrorShape(await account(user.token), 401, "unauthorized");
  });

  test("all: true ends every token of the account, not another account's", async () => {
    const user = await signup();
    const neighbour = await signup();
    const second = (await login(user.email, user.password)).body.token as string;
    expect((await call("POST", "/auth/logout", { json: { all: true }, headers: bearer(second) })).status).toBe(200);
    for (const token of [user.token, second]) expectErrorShape(await account(token, other), 401, "unauthorized");
    expect((await account(neighbour.token)).status).toBe(200);
    // A new login works.
    const fresh = (await login(user.email, user.password)).body.token as string;
    expect((await account(fresh)).status).toBe(200);
  });

  test("without a session: 401; a wrong body: 400", async () => {
    expectErrorShape(await call("POST", "/auth/logout", { json: {} }), 401, "unauthorized");
    const user = await signup();
    expectErrorShape(await call("POST", "/auth/logout", { json: { all: "yes" }, headers: bearer(user.token) }), 400, "invalid_request");
    expectErrorShape(await call("POST", "/auth/logout", { json: { everything: true }, headers: bearer(user.token) }), 400, "invalid_request");
  });
});

describe("a completed reset clears the email's login counts", () => {
  let inbox: Inbox;
  let service: Service;
  beforeAll(async () => {
    const { db } = await testService();
    inbox = await startInbox();
    const rateLimits = {
      ...testConfig().rateLimits,
      loginPair: { limit: 2, windowSeconds: 900 },
    };
    service = await mailService(db, { smtpUrl: inbox.url, rateLimits });
  });
  afterAll(async () => {
    await service.close();
    await inbox.close();
  });

  test("refused from an address before the reset, let in after it", async () => {
    const email = uniqueEmail("reset-clears");
    expect((await call("POST", "/auth/signup", { json: { email, password: "first passphrase here" }, service })).status).toBe(201);
    await inbox.waitFor(email); // the verification mail, before the reset mail is counted
    const ip = `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.7`;
    for (let i = 0; i < 2; i++) expectErrorShape(await login(email, "a wrong guess", ip, service), 401, "unauthorized");
    expectErrorShape(await login(email, "a wrong guess", ip, service), 429, "rate_limited");
    const token = await requestResetToken(service, inbox, email);
    expect((await call("POST", "/auth/reset-password/confirm", { json: { token, password: "second passphrase here" }, service })).status).toBe(200);
    expect((await login(email, "second passphrase here", ip, service)).status).toBe(200);
  });
});
