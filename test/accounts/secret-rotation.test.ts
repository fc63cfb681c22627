// Changing JWT_SECRET without downtime (docs/deployment.md): the new secret in JWT_SECRET, the old
// one in JWT_SECRET_PREVIOUS. Sessions signed with either are accepted; TOTP secrets sealed under
// the old one are sealed again under the new one at start; a signing key the old one sealed is
// retired for a new one, and what it signed still verifies; so are webhook signing secrets. Then the old secret is dropped: its
// sessions end, and second factors keep working.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generate } from "otplib";
import { serviceSecret } from "../../src/accounts/sessions.ts";
import { TOTP_SECRET_PURPOSE } from "../../src/accounts/totp.ts";
import { createService, type Service } from "../../src/app/service.ts";
import { loadConfig } from "../../src/config.ts";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import type { Db } from "../../src/db/index.ts";
import { createLogger } from "../../src/log.ts";
import { ReceiptSigner, signingKeyBox } from "../../src/receipts/signer.ts";
import { WEBHOOK_SECRET_PURPOSE } from "../../src/webhooks/manage.ts";
import { GATEWAY_SECRET_PURPOSE } from "../../src/gateways/manage.ts";
import { bearer } from "../helpers/accounts.ts";
import { SMALL_PAYMENT } from "../helpers/customer.ts";
import { call, GOOD_PASSWORD, openTestDb, subjectOf, testConfig, uniqueEmail } from "../helpers/service.ts";
import { testOne } from "../helpers/sql.ts";

const OLD = "the secret before the change, 32 characters or more";
const NEW = "the secret after the change, also 32 characters or more";

// Half-way into a 30 s step; each login spends a step's code, so the clock moves on after it.
let clock = Math.floor(Date.now() / 30_000) * 30_000 + 15_000;
let db: Db;
const services: Service[] = [];
const lines: string[] = [];

async function start(jwtSecret: string, jwtSecretPrevious?: string): Promise<Service> {
  const service = await createService(testConfig({ jwtSecret, jwtSecretPrevious }), { db, log: createLogger("info", (l) => lines.push(l)), now: () => new Date(clock) });
  services.push(service);
  return service;
}

const post = (service: Service, path: string, json: unknown, token?: string) => call("POST", path, { json, headers: token ? bearer(token) : {}, service });
const account = (service: Service, token: string) => call("GET", "/customer/account", { headers: bearer(token), service });
const totp = (secret: string) => generate({ secret, epoch: Math.floor(clock / 1000) });

async function loginWithCode(service: Service, email: string, secret: string) {
  clock += 30_000;
  const first = await post(service, "/auth/login", { email, password: GOOD_PASSWORD });
  expect(first.body.mfa_required).toBe(true);
  return post(service, "/auth/mfa/verify", { mfa_token: first.body.mfa_token, code: await totp(secret) });
}

beforeAll(async () => {
  db = await openTestDb();
});

afterAll(async () => {
  await Promise.all(services.map((s) => s.close()));
  // On PostgreSQL the database is the suite's: its signing key opens under the suite's secret again.
  await ReceiptSigner.rotate(db, await signingKeyBox(await serviceSecret(db)));
  await db.close();
});

describe("JWT_SECRET changed with JWT_SECRET_PREVIOUS", () => {
  test("sessions carry over, TOTP secrets are sealed again, the old signing key is retired; after the old secret is dropped only its sessions end", async () => {
    const before = await start(OLD);
    const email = uniqueEmail("rotation");
    const signup = await post(before, "/auth/signup", { email, password: GOOD_PASSWORD });
    expect(signup.status).toBe(201);
    const { token: oldToken, api_key: apiKey } = signup.body;
    const accountId = subjectOf(oldToken).account_id;
    const secret = (await post(before, "/customer/account/mfa/enroll", {}, oldToken)).body.secret as string;
    expect((await post(before, "/customer/account/mfa/confirm", { code: await totp(secret) }, oldToken)).status).toBe(200);
    const decided = await call("POST", "/v1/protect", { json: SMALL_PAYMENT, headers: { "x-api-key": apiKey }, service: before });
    expect(decided.status).toBe(200);
    const oldKid = before.deps.signer.kid;
    const sealedBefore = (await testOne<{ secret_sealed: string }>(db, "mfa_state", [accountId]))!.secret_sealed;

    // The new secret, the old one beside it.
    const during = await start(NEW, OLD);
    expect((await account(during, oldToken)).status).toBe(200);
    const sealedDuring = (await testOne<{ secret_sealed: string }>(db, "mfa_state", [accountId]))!.secret_sealed;
    expect(sealedDuring).not.toBe(sealedBefore);
    // Sealed under the new secret alone now, as the same secret.
    expect(await (await SecretBox.derive(NEW, TOTP_SECRET_PURPOSE)).open(sealedDuring, accountId)).toBe(secret);
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events).toContainEqual(expect.objectContaining({ event: "totp_secrets_resealed", resealed: 1 }));
    expect(events).toContainEqual(expect.objectContaining({ event: "signing_key_replaced", retired_kid: oldKid, kid: during.deps.signer.kid }));
    expect(during.deps.signer.kid).not.toBe(oldKid);
    // What the old key signed still verifies; the new key signs.
    const verify = (service: Service) => call("POST", "/v1/verify", { json: { receipt: decided.body }, headers: { "x-api-key": apiKey }, service });
    expect((await verify(during)).body).toMatchObject({ verified: true, checks: { signature: true } });
    const newToken = (await loginWithCode(during, email, secret)).body.token as string;
    expect((await account(during, newToken)).status).toBe(200);

    // The old secret dropped: its sessions end; the factor, sealed again, still works.
    const after = await start(NEW);
    expect((await account(after, oldToken)).status).toBe(401);
    expect((await account(after, newToken)).status).toBe(200);
    const login = await loginWithCode(after, email, secret);
    expect(login.status).toBe(200);
    expect((await verify(after)).body).toMatchObject({ verified: true, checks: { signature: true } });
  });

  test("webhook signing secrets, the current and the rotated one, are sealed again under the new secret", async () => {
    const before = await start(OLD);
    const signup = await post(before, "/auth/signup", { email: uniqueEmail("hooks"), password: GOOD_PASSWORD });
    const hook = await post(before, "/customer/webhooks", { url: "https://93.184.215.14/rotation", events: ["*"] }, signup.body.token);
    expect(hook.status).toBe(201);
    const rotated = await post(before, `/customer/webhooks/${hook.body.webhook_id}/rotate-secret`, {}, signup.body.token);
    expect(rotated.status).toBe(200);

    await start(NEW, OLD);
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events).toContainEqual(expect.objectContaining({ event: "webhook_secrets_resealed", resealed: 1 }));
    const stored = (await testOne<{ secret_sealed: string; previous_secret_sealed: string }>(db, "webhook_row", [hook.body.webhook_id]))!;
    const box = await SecretBox.derive(NEW, WEBHOOK_SECRET_PURPOSE);
    expect(await box.open(stored.secret_sealed, hook.body.webhook_id)).toBe(rotated.body.secret);
    expect(await box.open(stored.previous_secret_sealed, hook.body.webhook_id)).toBe(hook.body.secret);
  });

  test("remote gateways' secrets (the gateway's key, its shared secret, a member's own) are sealed again under the new secret", async () => {
    const before = await start(OLD);
    const signup = await post(before, "/auth/signup", { email: uniqueEmail("gateways"), password: GOOD_PASSWORD });
    const shared = await post(before, "/customer/mcp/gateways", { name: "rotation-shared", upstream_url: "https://93.184.215.14/mcp", upstream_auth: "shared", secret: "the-shared-one" }, signup.body.token);
    expect(shared.status).toBe(201);
    const perMember = await post(before, "/customer/mcp/gateways", { name: "rotation-member", upstream_url: "https://93.184.215.14/mcp", upstream_auth: "per_member" }, signup.body.token);
    expect(perMember.status).toBe(201);
    const own = await call("PUT", `/customer/mcp/gateways/${perMember.body.gateway_id}/secret`, { json: { secret: "my-own-one" }, headers: bearer(signup.body.token), service: before });
    expect(own.status).toBe(200);

    await start(NEW, OLD);
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    // Two gateways (the first its key and shared secret in one row), one member's secret; on a shared database other suites' gateways are sealed under neither secret here (unreadable).
    expect(events).toContainEqual(expect.objectContaining({ event: "gateway_secrets_resealed", resealed: 3 }));
    const box = await SecretBox.derive(NEW, GATEWAY_SECRET_PURPOSE);
    const read = (gatewayId: string) => db.one("gateways/credentials", [signup.body.tenant_id, gatewayId, signup.body.member_id]);
    const first = (await read(shared.body.gateway_id))!;
    expect(await box.open(first.secret_sealed!, `${shared.body.gateway_id}:shared`)).toBe("the-shared-one");
    expect(await box.open(first.key_secret_sealed!, `${shared.body.gateway_id}:key`)).toStartWith("warden_live_");
    const second = (await read(perMember.body.gateway_id))!;
    expect(await box.open(second.member_secret_sealed!, `${perMember.body.gateway_id}:member:${signup.body.member_id}`)).toBe("my-own-one");
  });

  test("without JWT_SECRET_PREVIOUS a changed secret ends sessions, and a TOTP code is refused (401, not 500); a recovery code still works", async () => {
    const first = await start(OLD);
    const email = uniqueEmail("rotation");
    const signup = await post(first, "/auth/signup", { email, password: GOOD_PASSWORD });
    const secret = (await post(first, "/customer/account/mfa/enroll", {}, signup.body.token)).body.secret as string;
    const recovery = (await post(first, "/customer/account/mfa/confirm", { code: await totp(secret) }, signup.body.token)).body.recovery_codes as string[];

    const changed = await start("a third secret, unrelated to the others, 32+ characters");
    expect((await account(changed, signup.body.token)).status).toBe(401);
    const refused = await loginWithCode(changed, email, secret);
    expect([refused.status, refused.body.error]).toEqual([401, "invalid_code"]);
    const challenge = await post(changed, "/auth/login", { email, password: GOOD_PASSWORD });
    expect((await post(changed, "/auth/mfa/verify", { mfa_token: challenge.body.mfa_token, code: recovery[0] })).status).toBe(200);
  });

  test("JWT_SECRET_PREVIOUS needs JWT_SECRET, 32 characters, and another value", () => {
    expect(() => loadConfig({ JWT_SECRET_PREVIOUS: OLD })).toThrow("JWT_SECRET_PREVIOUS needs JWT_SECRET");
    expect(() => loadConfig({ JWT_SECRET: NEW, JWT_SECRET_PREVIOUS: "short" })).toThrow("at least 32 characters");
    expect(() => loadConfig({ JWT_SECRET: NEW, JWT_SECRET_PREVIOUS: NEW })).toThrow("must differ");
    expect(loadConfig({ JWT_SECRET: NEW, JWT_SECRET_PREVIOUS: OLD }).jwtSecretPrevious).toBe(OLD);
  });
});
