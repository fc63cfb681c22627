// Customer sessions as an attacker sees them, over real HTTPS: forged, switched, tampered,
// misaddressed and expired JWTs are all 401, and so is every token issued before a password reset
// or change. Forgeries that need the server's key are made with the real one, so only the one
// property under test is wrong.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { base64url, exportJWK, generateKeyPair, SignJWT } from "jose";
import type { Service } from "../../src/app/service.ts";
import { bearer } from "../helpers/accounts.ts";
import { linkToken, mailService, startInbox, type Inbox } from "../helpers/mail.ts";
import { logLines, signup, subjectOf, testService } from "../helpers/service.ts";
import { expectCleanError, expectNoSecretIn, remember, startWire, wire, type Wire } from "./helpers.ts";

let server: Wire;
let inbox: Inbox;
let mailer: Service;
const mailerLines: string[] = [];
let key: Uint8Array;

beforeAll(async () => {
  const { db } = await testService();
  server = await startWire();
  inbox = await startInbox();
  mailer = await mailService(db, { smtpUrl: inbox.url }, mailerLines);
  // The server's own HS256 secret (kept in the database when JWT_SECRET is unset).
  const row = await db.one("system/secret_get", ["jwt_secret"]);
  key = new TextEncoder().encode(row!.value);
});
afterAll(async () => {
  await server?.stop();
  await mailer?.close();
  await inbox?.close();
});

const account = (token: string) => wire(server.url, "GET", "/customer/account", { headers: bearer(token) });
const enc = (value: unknown) => base64url.encode(JSON.stringify(value));
const parts = (token: string) => {
  const [h, p, s] = token.split(".");
  return { header: JSON.parse(new TextDecoder().decode(base64url.decode(h))), claims: JSON.parse(new TextDecoder().decode(base64url.decode(p))), signature: s };
};

async function user() {
  const u = await signup();
  remember(u.password);
  remember(u.token);
  remember(u.apiKey);
  return u;
}

/** Claims as the server issues them for the session `token` is (the person, their member of the tenant, the epochs), with `changes` applied. */
function claims(token: string, changes: Record<string, unknown> = {}) {
  const iat = Math.floor(Date.now() / 1000);
  const s = subjectOf(token);
  return {
    sub: s.account_id, sep: s.account_epoch, tid: s.tenant_id, mid: s.member_id, mep: s.member_epoch,
    iss: "warden", aud: "warden:customer", iat, exp: iat + 3600, jti: crypto.randomUUID(), ...changes,
  };
}

async function signed(payload: Record<string, unknown>, alg = "HS256", secret: Uint8Array | CryptoKey = key, header: Record<string, unknown> = {}) {
  const body = Object.fromEntries(Object.entries(payload).filter(([, v]) => v !== undefined));
  return remember(await new SignJWT(body).setProtectedHeader({ alg, typ: "JWT", ...header }).sign(secret));
}

async function expect401(token: string, error = "unauthorized") {
  const reply = await account(token);
  expectCleanError(reply, 401, error);
  // Nothing about why: the same message for every forgery.
  if (error === "unauthorized") expect(reply.body.message).toBe("Missing or invalid credentials.");
}

describe("JWT forgeries over HTTPS: all 401", () => {
  test("the control: a token made with the server's key and claims is accepted", async () => {
    const u = await user();
    expect((await account(u.token)).status).toBe(200);
    expect((await account(await signed(claims(u.token)))).status).toBe(200);
  });

  test("alg none, in any spelling, with or without the old signature", async () => {
    const u = await user();
    const { claims: c, signature } = parts(u.token);
    for (const alg of ["none", "None", "NONE", "nOnE"]) {
      await expect401(`${enc({ alg, typ: "JWT" })}.${enc(c)}.`);
      await expect401(`${enc({ alg, typ: "JWT" })}.${enc(c)}.${signature}`);
    }
    await expect401(`${enc({ typ: "JWT" })}.${enc(c)}.`);
  });

  test("algorithm switch: HS384/HS512 with the real key, ES256 with an embedded attacker key", async () => {
    const u = await user();
    await expect401(await signed(claims(u.token), "HS384"));
    await expect401(await signed(claims(u.token), "HS512"));
    const attacker = await generateKeyPair("ES256");
    await expect401(await signed(claims(u.token), "ES256", attacker.privateKey, { jwk: await exportJWK(attacker.publicKey) }));
    // A header naming a key elsewhere changes nothing: the key is pinned.
    await expect401(await signed(claims(u.token), "HS256", new TextEncoder().encode("k".repeat(64)), { kid: "../../dev/null", jku: "https://evil.test/jwks.json" }));
  });

  test("a tampered payload (other person, tenant or member, other epoch, longer life) with the original signature", async () => {
    const [u, other] = await Promise.all([user(), user()]);
    const { header, claims: c, signature } = parts(u.token);
    const h = enc(header);
    const o = subjectOf(other.token);
    await expect401(`${h}.${enc({ ...c, sub: o.account_id })}.${signature}`);
    await expect401(`${h}.${enc({ ...c, tid: o.tenant_id })}.${signature}`);
    await expect401(`${h}.${enc({ ...c, sub: o.account_id, tid: o.tenant_id, mid: o.member_id })}.${signature}`);
    await expect401(`${h}.${enc({ ...c, sep: c.sep + 1 })}.${signature}`);
    await expect401(`${h}.${enc({ ...c, mep: c.mep + 1 })}.${signature}`);
    await expect401(`${h}.${enc({ ...c, exp: c.exp + 86_400 })}.${signature}`);
    // And one changed signature character on the untouched claims.
    const flipped = signature.slice(0, 10) + (signature[10] === "A" ? "B" : "A") + signature.slice(11);
    await expect401(`${h}.${u.token.split(".")[1]}.${flipped}`);
  });

  test("wrong or missing iss and aud, signed with the real key", async () => {
    const u = await user();
    for (const change of [{ iss: "evil" }, { iss: undefined }, { aud: "warden:admin" }, { aud: ["other"] }, { aud: undefined }]) {
      await expect401(await signed(claims(u.token, change)));
    }
  });

  test("missing or mistyped subject, tenant, member and epochs, signed with the real key", async () => {
    const u = await user();
    const changes = [
      { sub: undefined }, { sep: undefined }, { sep: "0" }, { sub: "acct_AAAAAAAAAAAAAAAAAAAAAA" }, { sub: `${subjectOf(u.token).account_id}' OR '1'='1` },
      { tid: undefined }, { mid: undefined }, { mep: undefined }, { mep: "0" }, { mid: "mbr_AAAAAAAAAAAAAAAAAAAAAA" },
    ];
    for (const change of changes) await expect401(await signed(claims(u.token, change)));
  });

  test("claims that do not match the member as stored, signed with the real key", async () => {
    const [u, other] = await Promise.all([user(), user()]);
    const o = subjectOf(other.token);
    // Another tenant's id, or another person's member, beside one's own person; epochs not (or no longer) current.
    for (const change of [{ tid: o.tenant_id }, { mid: o.member_id }, { mid: o.member_id, tid: o.tenant_id }, { sep: 1 }, { mep: 1 }]) {
      await expect401(await signed(claims(u.token, change)));
    }
  });

  test("an expired token is 401 token_expired; one not yet valid is 401", async () => {
    const u = await user();
    const past = Math.floor(Date.now() / 1000) - 25 * 3600;
    await expect401(await signed(claims(u.token, { iat: past, exp: past + 24 * 3600 })), "token_expired");
    await expect401(await signed(claims(u.token, { nbf: Math.floor(Date.now() / 1000) + 3600 })));
  });

  test("other tokens the service signs (receipt and checkpoint JWS, EdDSA) are not sessions", async () => {
    const u = await user();
    const decided = await wire(server.url, "POST", "/v1/protect", { json: { action: "document.read" }, headers: { "x-api-key": u.apiKey } });
    const checkpoint = await wire(server.url, "GET", "/customer/receipts/checkpoint", { headers: bearer(u.token) });
    for (const jws of [decided.body.signature, checkpoint.body.signature]) {
      expect(parts(jws).header.alg).toBe("EdDSA");
      await expect401(jws);
    }
  });

  test("a token anywhere but the Authorization header is ignored", async () => {
    const u = await user();
    for (const query of ["access_token", "token", "jwt", "authorization"]) {
      expectCleanError(await wire(server.url, "GET", `/customer/account?${query}=${u.token}`), 401, "unauthorized");
    }
    expectCleanError(await wire(server.url, "GET", "/customer/account", { headers: { cookie: `token=${u.token}` } }), 401, "unauthorized");
    for (const header of [`Token ${u.token}`, `Bearer  ${u.token} x`, u.token]) {
      expectCleanError(await wire(server.url, "GET", "/customer/account", { headers: { authorization: header } }), 401, "unauthorized");
    }
  });
});

describe("sessions end with a credential change", () => {
  test("every token issued before a password reset is 401; the new password's token works", async () => {
    const u = await user();
    const second = (await wire(server.url, "POST", "/auth/login", { json: { email: u.email, password: u.password } })).body.token;
    remember(second);
    // The signup's verification mail first, then the reset mail.
    await inbox.waitFor(u.email, 1);
    expect((await wire(server.url, "POST", "/auth/reset-password/request", { json: { email: u.email } })).status).toBe(202);
    const messages = await inbox.waitFor(u.email, 2);
    const resetToken = remember(linkToken(messages.find((m) => m.parsed.text?.includes("/console/reset"))!, "/console/reset"));
    const password = remember("a reset passphrase for the wire");
    expect((await wire(server.url, "POST", "/auth/reset-password/confirm", { json: { token: resetToken, password } })).status).toBe(200);
    await expect401(u.token);
    await expect401(second);
    const fresh = await wire(server.url, "POST", "/auth/login", { json: { email: u.email, password } });
    remember(fresh.body.token);
    expect((await account(fresh.body.token)).status).toBe(200);
  });

  test("every token issued before a password change is 401, the caller's own included", async () => {
    const u = await user();
    const other = remember((await wire(server.url, "POST", "/auth/login", { json: { email: u.email, password: u.password } })).body.token as string);
    const next = remember("a changed passphrase for the wire");
    const changed = await wire(server.url, "POST", "/customer/account/password", { json: { current_password: u.password, new_password: next }, headers: bearer(u.token) });
    expect(changed.status).toBe(200);
    remember(changed.body.token);
    await expect401(u.token);
    await expect401(other);
    expect((await account(changed.body.token)).status).toBe(200);
  });
});

test("no password, token, JWT or key used here reaches a log line", () => {
  expectNoSecretIn([...server.lines, ...mailerLines, ...logLines]);
});
