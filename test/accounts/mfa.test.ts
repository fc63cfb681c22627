// The second factor (TOTP, RFC 6238, with recovery codes): enrol, confirm, the login's second
// step, a code accepted once per 30 s step, a recovery code once, disable; the secret sealed at
// rest. A service with its own clock, so the test picks the 30 s step.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generate } from "otplib";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { bearer } from "../helpers/accounts.ts";
import { call, expectErrorShape, GOOD_PASSWORD, logLines, subjectOf, testConfig, testService, uniqueEmail } from "../helpers/service.ts";
import { testOne } from "../helpers/sql.ts";

// Half-way into a step, so a step boundary never falls inside a test by accident.
let clock = Math.floor(Date.now() / 30_000) * 30_000 + 15_000;
let service: Service;
beforeAll(async () => {
  const { db } = await testService();
  const rateLimits = { ...testConfig().rateLimits, loginPair: { limit: 5, windowSeconds: 900 } };
  service = await createService(testConfig({ rateLimits }), { db, log: createLogger("info", (l) => logLines.push(l)), now: () => new Date(clock) });
});
afterAll(() => service.close());

const post = (path: string, json: unknown, token?: string, ip?: string) => call("POST", path, { json, headers: token ? bearer(token) : {}, service, ip });
const totp = (secret: string, at = clock) => generate({ secret, epoch: Math.floor(at / 1000) });
const nextStep = () => (clock += 30_000);

async function newAccount() {
  const email = uniqueEmail("mfa");
  const reply = await post("/auth/signup", { email, password: GOOD_PASSWORD });
  expect(reply.status).toBe(201);
  return { email, token: reply.body.token as string, tenantId: reply.body.tenant_id as string, accountId: subjectOf(reply.body.token).account_id };
}

async function withMfa() {
  const user = await newAccount();
  const enrolled = await post("/customer/account/mfa/enroll", {}, user.token);
  const secret = enrolled.body.secret as string;
  const confirmed = await post("/customer/account/mfa/confirm", { code: await totp(secret) }, user.token);
  expect(confirmed.status).toBe(200);
  return { ...user, secret, recovery: confirmed.body.recovery_codes as string[] };
}

async function challenge(email: string, ip?: string): Promise<string> {
  const reply = await post("/auth/login", { email, password: GOOD_PASSWORD }, undefined, ip);
  expect(reply.status).toBe(200);
  return reply.body.mfa_token;
}

describe("enrol and confirm", () => {
  test("enroll gives a base32 secret and its otpauth URL; login asks nothing until confirmed", async () => {
    const user = await newAccount();
    const enrolled = await post("/customer/account/mfa/enroll", {}, user.token);
    expect(enrolled.status).toBe(200);
    expect(Object.keys(enrolled.body).sort()).toEqual(["ok", "otpauth_url", "secret"]);
    expect(enrolled.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(enrolled.body.otpauth_url);
    expect(url.protocol).toBe("otpauth:");
    expect(url.searchParams.get("secret")).toBe(enrolled.body.secret);
    expect(url.searchParams.get("issuer")).toBe("warden");
    const login = await post("/auth/login", { email: user.email, password: GOOD_PASSWORD });
    expect(typeof login.body.token).toBe("string");
    expect(login.body.mfa_required).toBeUndefined();
  });

  test("confirm refuses a wrong code and gives ten distinct recovery codes for the right one; they are stored hashed", async () => {
    const user = await newAccount();
    const { secret } = (await post("/customer/account/mfa/enroll", {}, user.token)).body;
    expectErrorShape(await post("/customer/account/mfa/confirm", { code: (Number(await totp(secret)) + 1).toString().padStart(6, "0").slice(-6) }, user.token), 401, "invalid_code");
    const confirmed = await post("/customer/account/mfa/confirm", { code: await totp(secret) }, user.token);
    expect(confirmed.status).toBe(200);
    const codes: string[] = confirmed.body.recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const { db } = await testService();
    const row = await testOne<{ status: string; secret_sealed: string; codes: number; code_hashes: string[] }>(db, "mfa_state", [user.accountId]);
    expect(row!.status).toBe("active");
    expect(row!.codes).toBe(10);
    // Neither the secret nor a recovery code is in the database as such.
    expect(row!.secret_sealed).not.toContain(secret);
    expect(row!.secret_sealed).toMatch(/^v1\./);
    for (const code of codes) expect(row!.code_hashes.join(" ")).not.toContain(code.replaceAll("-", ""));
    // Confirming again: nothing pending.
    nextStep();
    expectErrorShape(await post("/customer/account/mfa/confirm", { code: await totp(secret) }, user.token), 409, "not_pending");
  });

  test("enrolling while a factor is active is refused", async () => {
    const user = await withMfa();
    expectErrorShape(await post("/customer/account/mfa/enroll", {}, user.token), 409, "mfa_enabled");
  });
});

describe("login with the second factor on", () => {
  test("the password alone gives a 5-minute challenge and no session; the code gives the session", async () => {
    const user = await withMfa();
    nextStep();
    const reply = await post("/auth/login", { email: user.email, password: GOOD_PASSWORD });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(["expires_at", "mfa_required", "mfa_token", "ok"]);
    expect(reply.body.mfa_required).toBe(true);
    expect(Date.parse(reply.body.expires_at)).toBe(Math.floor(clock / 1000) * 1000 + 5 * 60_000);
    // The challenge is no session.
    expectErrorShape(await call("GET", "/customer/account", { headers: bearer(reply.body.mfa_token), service }), 401, "unauthorized");
    const verified = await post("/auth/mfa/verify", { mfa_token: reply.body.mfa_token, code: await totp(user.secret) });
    expect(verified.status).toBe(200);
    expect(verified.body.tenant_id).toBe(user.tenantId);
    expect((await call("GET", "/customer/account", { headers: bearer(verified.body.token), service })).status).toBe(200);
  });

  test("a wrong password is the same 401 as without a second factor", async () => {
    const user = await withMfa();
    expectErrorShape(await post("/auth/login", { email: user.email, password: "not the password" }), 401, "unauthorized");
  });

  test("a code already accepted in its step is refused, also through another challenge; the next step's works", async () => {
    const user = await withMfa();
    nextStep();
    const code = await totp(user.secret);
    expect((await post("/auth/mfa/verify", { mfa_token: await challenge(user.email), code })).status).toBe(200);
    expectErrorShape(await post("/auth/mfa/verify", { mfa_token: await challenge(user.email), code }), 401, "invalid_code");
    // The previous step's code is refused too (the confirm's step and every one before it).
    expectErrorShape(await post("/auth/mfa/verify", { mfa_token: await challenge(user.email), code: await totp(user.secret, clock - 30_000) }), 401, "invalid_code");
    nextStep();
    expect((await post("/auth/mfa/verify", { mfa_token: await challenge(user.email), code: await totp(user.secret) })).status).toBe(200);
  });

  test("a recovery code works once, however it is typed", async () => {
    const user = await withMfa();
    const [first] = user.recovery;
    expect((await post("/auth/mfa/verify", { mfa_token: await challenge(user.email), code: ` ${first.toUpperCase()} ` })).status).toBe(200);
    expectErrorShape(await post("/auth/mfa/verify", { mfa_token: await challenge(user.email), code: first }), 401, "invalid_code");
    expect((await post("/auth/mfa/verify", { mfa_token: await challenge(user.email), code: user.recovery[1].replaceAll("-", "") })).status).toBe(200);
  });

  test("another account's recovery code or code does not work", async () => {
    const user = await withMfa();
    const stranger = await withMfa();
    nextStep();
    expectErrorShape(await post("/auth/mfa/verify", { mfa_token: await challenge(user.email), code: stranger.recovery[0] }), 401, "invalid_code");
    expectErrorShape(await post("/auth/mfa/verify", { mfa_token: await challenge(user.email), code: await totp(stranger.secret) }), 401, "invalid_code");
  });

  test("the challenge expires after 5 minutes and is refused when forged", async () => {
    const user = await withMfa();
    const token = await challenge(user.email);
    clock += 5 * 60_000 + 1000;
    expectErrorShape(await post("/auth/mfa/verify", { mfa_token: token, code: await totp(user.secret) }), 401, "token_expired");
    expectErrorShape(await post("/auth/mfa/verify", { mfa_token: `${token}x`, code: await totp(user.secret) }), 401, "unauthorized");
    // A session token is no challenge either.
    expectErrorShape(await post("/auth/mfa/verify", { mfa_token: user.token, code: await totp(user.secret) }), 401, "unauthorized");
  });

  test("code guesses are rate-limited like login, per account and address", async () => {
    const user = await withMfa();
    const ip = `10.77.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
    const token = await challenge(user.email, ip);
    for (let i = 0; i < 5; i++) expectErrorShape(await post("/auth/mfa/verify", { mfa_token: token, code: "000000" }, undefined, ip), 401, "invalid_code");
    expectErrorShape(await post("/auth/mfa/verify", { mfa_token: token, code: await totp(user.secret) }, undefined, ip), 429, "rate_limited");
  });
});

describe("disable", () => {
  test("needs the password and a code; then login gives a session at once", async () => {
    const user = await withMfa();
    nextStep();
    const code = await totp(user.secret);
    expectErrorShape(await post("/customer/account/mfa/disable", { password: "not the password", code }, user.token), 401, "unauthorized");
    expectErrorShape(await post("/customer/account/mfa/disable", { password: GOOD_PASSWORD, code: "12345" }, user.token), 401, "invalid_code");
    expect((await post("/customer/account/mfa/disable", { password: GOOD_PASSWORD, code }, user.token)).status).toBe(200);
    const login = await post("/auth/login", { email: user.email, password: GOOD_PASSWORD });
    expect(typeof login.body.token).toBe("string");
    // Nothing left to disable; the old recovery codes are gone.
    nextStep();
    expectErrorShape(await post("/customer/account/mfa/disable", { password: GOOD_PASSWORD, code: await totp(user.secret) }, user.token), 401, "invalid_code");
    const { db } = await testService();
    expect((await testOne<{ status: string; codes: number }>(db, "mfa_state", [user.accountId]))!).toMatchObject({ status: "disabled", codes: 0 });
    // Enrolling again starts over with a new secret.
    const again = await post("/customer/account/mfa/enroll", {}, user.token);
    expect(again.status).toBe(200);
    expect(again.body.secret).not.toBe(user.secret);
  });

  test("a recovery code disables too", async () => {
    const user = await withMfa();
    expect((await post("/customer/account/mfa/disable", { password: GOOD_PASSWORD, code: user.recovery[3] }, user.token)).status).toBe(200);
  });
});

describe("new recovery codes", () => {
  test("need the password and a code; ten new ones replace every earlier code", async () => {
    const user = await withMfa();
    nextStep();
    const code = await totp(user.secret);
    const replace = (json: unknown, token = user.token) => post("/customer/account/mfa/recovery-codes", json, token);
    expectErrorShape(await replace({ password: "not the password", code }), 401, "unauthorized");
    expectErrorShape(await replace({ password: GOOD_PASSWORD, code: "12345" }), 401, "invalid_code");
    expectErrorShape(await replace({ password: GOOD_PASSWORD }), 400, "invalid_request");
    const replaced = await replace({ password: GOOD_PASSWORD, code });
    expect(replaced.status).toBe(200);
    expect(Object.keys(replaced.body).sort()).toEqual(["ok", "recovery_codes"]);
    const fresh = replaced.body.recovery_codes as string[];
    expect(new Set(fresh).size).toBe(10);
    expect(fresh.some((c) => user.recovery.includes(c))).toBe(false);
    const { db } = await testService();
    const state = (await testOne<{ codes: number; code_hashes: string[] }>(db, "mfa_state", [user.accountId]))!;
    expect(state.codes).toBe(10);
    expect(JSON.stringify(state)).not.toContain(fresh[0]);

    // An earlier code no longer signs in; a new one does, once (from another address: the tries
    // above count against this one's limit on code guesses).
    const ip = "198.51.100.7";
    const verify = async (code: string) => post("/auth/mfa/verify", { mfa_token: await challenge(user.email, ip), code }, undefined, ip);
    expectErrorShape(await verify(user.recovery[0]!), 401, "invalid_code");
    expect((await verify(fresh[0]!)).status).toBe(200);
    expectErrorShape(await verify(fresh[0]!), 401, "invalid_code");
    // A recovery code may be spent to get new ones (the last one left, say).
    expect((await replace({ password: GOOD_PASSWORD, code: fresh[1] })).status).toBe(200);
    expectErrorShape(await verify(fresh[2]!), 401, "invalid_code");
  });

  test("without an active factor: 401 invalid_code, and nothing is stored", async () => {
    const user = await newAccount();
    expectErrorShape(await post("/customer/account/mfa/recovery-codes", { password: GOOD_PASSWORD, code: "ABCD-EFGH-JKLM-NPQR-STUV" }, user.token), 401, "invalid_code");
    await post("/customer/account/mfa/enroll", {}, user.token);
    expectErrorShape(await post("/customer/account/mfa/recovery-codes", { password: GOOD_PASSWORD, code: "123456" }, user.token), 401, "invalid_code");
    const { db } = await testService();
    expect((await testOne<{ status: string; codes: number }>(db, "mfa_state", [user.accountId]))!).toMatchObject({ status: "pending", codes: 0 });
  });
});
