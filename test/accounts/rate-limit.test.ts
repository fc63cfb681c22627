// Brute-force limits on the password routes: per client address (IPv6 by /64 and by /48) and
// route; per (email, address) for login, with a per-email ceiling that slows and never locks out;
// per email for mail. Services here have tight limits and a clock the test moves; they share the
// database, and so their counters, with every other instance.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RateLimits } from "../../src/config.ts";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { bearer } from "../helpers/accounts.ts";
import { invitationToken } from "../helpers/members.ts";
import { call, expectErrorShape, signup, testConfig, testService, uniqueEmail, type Reply } from "../helpers/service.ts";

const LIMITS: RateLimits = {
  authAddress: { limit: 3, windowSeconds: 60 },
  authNetwork: { limit: 6, windowSeconds: 60 },
  loginPair: { limit: 3, windowSeconds: 900 },
  loginEmail: { limit: 5, windowSeconds: 900 },
  mailEmail: { limit: 2, windowSeconds: 3600 },
};
const SLOWDOWN_MS = 400;

let clock = Date.now();
const services: Service[] = [];

async function limitedService(overrides: Parameters<typeof testConfig>[0] = {}): Promise<Service> {
  const { db } = await testService();
  const service = await createService(testConfig({ rateLimits: LIMITS, loginSlowdownMs: SLOWDOWN_MS, ...overrides }), { db, log: createLogger("silent"), now: () => new Date(clock) });
  services.push(service);
  return service;
}

let service: Service;
beforeAll(async () => {
  service = await limitedService();
});
afterAll(async () => {
  await Promise.all(services.map((s) => s.close()));
});

// Fresh addresses per test and per run (a server database keeps its counters between runs,
// some with windows this file's moved clock pushed into the future).
let n = Math.floor(Math.random() * 0xffffff);
const ipv4 = () => {
  const v = n++ & 0xffffff;
  return `10.${v >> 16}.${(v >> 8) & 255}.${v & 255}`;
};
const prefix64 = () => `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:${(n++ & 0xffff).toString(16)}`;

// A fresh email each time unless one is given, so only the address limit can trip.
const badLogin = (ip: string, email = uniqueEmail("nobody"), svc = service, headers: Record<string, string> = {}) =>
  call("POST", "/auth/login", { json: { email, password: "wrong password" }, ip, service: svc, headers });

function expectLimited(reply: Reply, maxSeconds: number): void {
  expectErrorShape(reply, 429, "rate_limited");
  const header = Number(reply.headers.get("retry-after"));
  expect(header).toBe(reply.body.retry_after);
  expect(header).toBeGreaterThanOrEqual(1);
  expect(header).toBeLessThanOrEqual(maxSeconds);
}

describe("per client address", () => {
  test("the 4th request in a minute is 429 with Retry-After; after the window it works again", async () => {
    const ip = ipv4();
    for (let i = 0; i < 3; i++) expectErrorShape(await badLogin(ip), 401, "unauthorized");
    expectLimited(await badLogin(ip), 60);
    // Still refused while the window runs, without pushing the end further out.
    clock += 30_000;
    const again = await badLogin(ip);
    expectLimited(again, 30);
    clock += 31_000;
    expectErrorShape(await badLogin(ip), 401, "unauthorized");
  });

  test("counts per route, and /auth/login/ counts as /auth/login", async () => {
    const ip = ipv4();
    for (let i = 0; i < 2; i++) await badLogin(ip);
    expectErrorShape(await call("POST", "/auth/login/", { json: { email: uniqueEmail("slash"), password: "wrong password" }, ip, service }), 401, "unauthorized");
    expectLimited(await badLogin(ip), 60);
    expect((await call("POST", "/auth/reset-password/validate", { json: { token: "x" }, ip, service })).status).toBe(200);
    for (const path of ["//auth/login", "/auth//login", "/AUTH/login"]) {
      expectErrorShape(await call("POST", path, { json: { email: "a@example.com", password: "x" }, ip, service }), 404, "not_found");
    }
  });

  test("malformed requests count too", async () => {
    const ip = ipv4();
    for (let i = 0; i < 3; i++) expectErrorShape(await call("POST", "/auth/login", { json: { email: 1 }, ip, service }), 400, "invalid_request");
    expectLimited(await badLogin(ip), 60);
  });

  test("IPv6: the /64s of one /48 share a wider counter", async () => {
    const site = `2001:db8:${(n++ & 0xffff).toString(16)}`;
    // Six /64s of the site, one request each: within every /64's limit and the /48's.
    for (let i = 1; i <= 6; i++) expectErrorShape(await badLogin(`${site}:${i.toString(16)}::1`), 401, "unauthorized");
    expectLimited(await badLogin(`${site}:ff::1`), 60);
    expectErrorShape(await badLogin(`2001:db8:${(n++ & 0xffff).toString(16)}:1::1`), 401, "unauthorized");
  });

  test("every /auth route and every password route is limited", async () => {
    // A fresh email and account per request, so only the address limit can trip.
    const users = await Promise.all([signup(), signup(), signup(), signup()]);
    const auth = (i: number) => bearer(users[i].token);
    const none = () => undefined;
    const routes: [string, string, (i: number) => unknown, (i: number) => Record<string, string> | undefined][] = [
      ["POST", "/auth/signup", (i) => ({ email: `${i}.x`, password: "y" }), none],
      ["POST", "/auth/login", () => ({ email: uniqueEmail("limited"), password: "y" }), none],
      ["POST", "/auth/verify-email/request", () => ({}), auth],
      ["POST", "/auth/verify-email/confirm", () => ({ token: "x" }), none],
      ["GET", "/auth/verify-email/status", () => undefined, auth],
      ["POST", "/auth/reset-password/request", () => ({ email: uniqueEmail("limited") }), none],
      ["POST", "/auth/reset-password/validate", () => ({ token: "x" }), none],
      ["POST", "/auth/reset-password/confirm", () => ({ token: "x", password: "whatever it is" }), none],
      ["POST", "/auth/mfa/verify", () => ({ mfa_token: "x", code: "123456" }), none],
      ["POST", "/auth/logout", () => ({ all: false }), none],
      ["POST", "/customer/account/password", () => ({ current_password: "a guess", new_password: "another passphrase" }), auth],
      ["POST", "/customer/account/mfa/enroll", () => ({}), auth],
      ["POST", "/customer/account/mfa/confirm", () => ({ code: "123456" }), auth],
      ["POST", "/customer/account/mfa/disable", () => ({ password: "a guess", code: "123456" }), auth],
      ["POST", "/customer/account/mfa/recovery-codes", () => ({ password: "a guess", code: "123456" }), auth],
    ];
    for (const [method, path, json, headers] of routes) {
      const ip = ipv4();
      for (let i = 0; i < 3; i++) expect((await call(method, path, { json: json(i), headers: headers(i), ip, service })).status).not.toBe(429);
      expectLimited(await call(method, path, { json: json(3), headers: headers(3), ip, service }), 60);
    }
  });

  test("reading the account is no password route: not limited", async () => {
    const user = await signup();
    const ip = ipv4();
    for (let i = 0; i < 5; i++) expect((await call("GET", "/customer/account", { headers: bearer(user.token), ip, service })).status).toBe(200);
  });

  test("a spoofed X-Forwarded-For does not help without TRUST_PROXY", async () => {
    const ip = ipv4();
    for (let i = 0; i < 3; i++) await badLogin(ip, undefined, service, { "x-forwarded-for": ipv4() });
    expectLimited(await badLogin(ip, undefined, service, { "x-forwarded-for": ipv4() }), 60);
  });

  test("with TRUST_PROXY=1 the address the proxy appended counts, not what the client sent", async () => {
    const proxied = await limitedService({ trustProxy: true });
    const proxy = "10.0.0.1";
    const client = ipv4();
    const via = (sent: string) => ({ "x-forwarded-for": `${sent}, ${client}`, "x-forwarded-proto": "https" });
    for (let i = 0; i < 3; i++) await badLogin(proxy, undefined, proxied, via(ipv4()));
    expectLimited(await badLogin(proxy, undefined, proxied, via(ipv4())), 60);
    // Another client behind the same proxy has its own counter.
    const neighbour = { "x-forwarded-for": ipv4(), "x-forwarded-proto": "https" };
    expectErrorShape(await badLogin(proxy, undefined, proxied, neighbour), 401, "unauthorized");
  });

  test("IPv6 neighbours in one /64 share a counter; the next /64 does not", async () => {
    const net = prefix64();
    const addresses = [`${net}::1`, `${net}:1:2:3:4`, `${net}:ffff:ffff:ffff:fffe`];
    for (const ip of addresses) expectErrorShape(await badLogin(ip), 401, "unauthorized");
    expectLimited(await badLogin(`${net}::abcd`), 60);
    expectErrorShape(await badLogin(`${prefix64()}::1`), 401, "unauthorized");
  });

  test("an IPv4 client on a dual-stack socket counts as its IPv4 address", async () => {
    const ip = ipv4();
    for (let i = 0; i < 3; i++) await badLogin(`::ffff:${ip}`);
    expectLimited(await badLogin(ip), 60);
  });

  test("instances share the counters", async () => {
    const other = await limitedService();
    const ip = ipv4();
    await badLogin(ip, undefined, service);
    await badLogin(ip, undefined, other);
    await badLogin(ip, undefined, service);
    expectLimited(await badLogin(ip, undefined, other), 60);
  });
});

describe("per email", () => {
  const login = (email: string, password: string, ip: string) => call("POST", "/auth/login", { json: { email, password }, ip, service });
  async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
    const start = performance.now();
    const result = await work();
    return [result, performance.now() - start];
  }

  test("a stranger's guesses from many addresses never lock the owner out: past the ceiling they are slowed, not refused", async () => {
    const user = await signup();
    for (let i = 0; i < 5; i++) expectErrorShape(await badLogin(ipv4(), user.email), 401, "unauthorized");
    // Over the per-email ceiling: still an answer, only later.
    const [late, lateMs] = await timed(() => badLogin(ipv4(), user.email));
    expectErrorShape(late, 401, "unauthorized");
    expect(lateMs).toBeGreaterThanOrEqual(SLOWDOWN_MS - 5);
    // The owner, from their own address, gets in (the answer slowed like everyone's).
    const [owner, ownerMs] = await timed(() => login(user.email.toUpperCase(), user.password, ipv4()));
    expect(owner.status).toBe(200);
    expect(ownerMs).toBeGreaterThanOrEqual(SLOWDOWN_MS - 5);
    // The success cleared the email's counts: the next answer is prompt again.
    const [after, afterMs] = await timed(() => login(user.email, user.password, ipv4()));
    expect(after.status).toBe(200);
    expect(afterMs).toBeLessThan(SLOWDOWN_MS);
  });

  test("per (email, address): the 4th attempt from one address is refused, the right password too; other addresses are not", async () => {
    const user = await signup();
    const ip = ipv4();
    for (let i = 0; i < 3; i++) expectErrorShape(await badLogin(ip, user.email), 401, "unauthorized");
    // Past the per-address window (60 s), inside the per-(email, address) one (900 s).
    clock += 61_000;
    expectLimited(await login(user.email, user.password, ip), 900);
    expect((await login(user.email, user.password, ipv4())).status).toBe(200);
    clock += 901_000;
    expect((await login(user.email, user.password, ip)).status).toBe(200);
  });

  test("a successful login clears the email's counts", async () => {
    const user = await signup();
    const ip = ipv4();
    for (let i = 0; i < 2; i++) expectErrorShape(await badLogin(ip, user.email), 401, "unauthorized");
    expect((await login(user.email, user.password, ip)).status).toBe(200);
    clock += 61_000; // a fresh per-address window; the per-(email, address) one runs on
    // Three more wrong guesses fit again; a fourth does not.
    for (let i = 0; i < 3; i++) expectErrorShape(await badLogin(ip, user.email), 401, "unauthorized");
    clock += 61_000;
    expectLimited(await badLogin(ip, user.email), 900);
  });

  test("accepting an invitation with an account's password counts with the login's guesses, per (email, address)", async () => {
    const boss = await signup();
    const user = await signup();
    const token = await invitationToken(boss.token, user.email, "viewer");
    const ip = ipv4();
    const accept = (password: string, from: string) => call("POST", "/auth/invitations/accept", { json: { token, password }, ip: from, service });
    for (let i = 0; i < 3; i++) expectErrorShape(await accept("a wrong guess", ip), 401, "unauthorized");
    // The login's own counters: a 4th try from this address, by login, is refused.
    expectLimited(await login(user.email, user.password, ip), 900);
    clock += 61_000;
    expectLimited(await accept(user.password, ip), 900);
    // From another address the right password joins.
    const joined = await accept(user.password, ipv4());
    expect(joined.status).toBe(200);
    expect(joined.body.tenant_id).toBe(boss.tenantId);
  });

  test("password change attempts are counted per account and address, apart from login", async () => {
    const user = await signup();
    const ip = ipv4();
    const change = (current: string) =>
      call("POST", "/customer/account/password", { json: { current_password: current, new_password: "another passphrase" }, headers: bearer(user.token), ip, service });
    for (let i = 0; i < 3; i++) expectErrorShape(await change("a guess"), 401, "unauthorized");
    clock += 61_000;
    expectLimited(await change(user.password), 900);
    // A thief's guesses with a stolen session do not keep the owner from logging in, from the same address either.
    expect((await login(user.email, user.password, ip)).status).toBe(200);
  });

  test("reset requests: the 3rd in an hour is refused, for a registered and an unknown address alike", async () => {
    const user = await signup();
    const ghost = uniqueEmail("ghost");
    for (const email of [user.email, ghost]) {
      for (let i = 0; i < 2; i++) expect((await call("POST", "/auth/reset-password/request", { json: { email }, ip: ipv4(), service })).status).toBe(202);
      expectLimited(await call("POST", "/auth/reset-password/request", { json: { email }, ip: ipv4(), service }), 3600);
    }
    clock += 3601_000;
    expect((await call("POST", "/auth/reset-password/request", { json: { email: user.email }, ip: ipv4(), service })).status).toBe(202);
  });

  test("verification requests are limited per account", async () => {
    const user = await signup();
    const ask = () => call("POST", "/auth/verify-email/request", { headers: bearer(user.token), ip: ipv4(), service });
    for (let i = 0; i < 2; i++) expect((await ask()).status).toBe(202);
    expectLimited(await ask(), 3600);
    clock += 3601_000;
    // The clock moved past the JWT's life too: log in again on the moved clock.
    const session = await call("POST", "/auth/login", { json: { email: user.email, password: user.password }, ip: ipv4(), service });
    expect((await call("POST", "/auth/verify-email/request", { headers: bearer(session.body.token), ip: ipv4(), service })).status).toBe(202);
  });
});
