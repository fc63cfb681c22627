// Brute-force limits an attacker cannot shake off: over real HTTPS (where the peer address, the
// raw path and the query string are what the wire carries), a forged X-Forwarded-For, a trailing
// slash, a query string, `//auth/login` and other spellings of the path neither reset nor bypass
// the per-address counter; in-process (where the peer address can be chosen), neither does moving
// to another address of the same IPv6 /64, nor respelling the email.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { RateLimits } from "../../src/config.ts";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { call, logLines, signup, testConfig, testService, uniqueEmail } from "../helpers/service.ts";
import { expectCleanError, expectNoSecretIn, rawWire, remember, startWire, wire, type Wire } from "./helpers.ts";
import { testQuery } from "../helpers/sql.ts";

const TIGHT: RateLimits = {
  authAddress: { limit: 3, windowSeconds: 60 },
  authNetwork: { limit: 1_000_000, windowSeconds: 60 },
  loginPair: { limit: 5, windowSeconds: 900 },
  loginEmail: { limit: 1_000_000, windowSeconds: 900 },
  mailEmail: { limit: 1_000_000, windowSeconds: 60 },
};
const WRONG = remember("wrong passphrase, on purpose");

let server: Wire;
let local: Service;
let pairs: Service;
beforeAll(async () => {
  server = await startWire({ rateLimits: TIGHT });
  const { db } = await testService();
  local = await createService(testConfig({ rateLimits: TIGHT }), { db, log: createLogger("info", (l) => logLines.push(l)) });
  const noAddressLimit = { ...TIGHT, authAddress: { limit: 1_000_000, windowSeconds: 60 } };
  pairs = await createService(testConfig({ rateLimits: noAddressLimit }), { db, log: createLogger("info", (l) => logLines.push(l)) });
});
afterAll(async () => {
  await server?.stop();
  await local?.close();
  await pairs?.close();
});

describe("over HTTPS, from 127.0.0.1", () => {
  beforeEach(async () => {
    // The database keeps counters between tests and runs; every test here starts from zero.
    const { db } = await testService();
    await testQuery(db, "rate_limit_forget", ["127.0.0.1"]);
  });

  // Written byte for byte: fetch would tidy `//auth/login` up before sending it.
  const login = (path = "/auth/login", headers: Record<string, string> = {}) =>
    rawWire(server.url, "POST", path, { json: { email: uniqueEmail("rl"), password: WRONG }, headers });

  function expectLimited(reply: Awaited<ReturnType<typeof login>>) {
    expectCleanError(reply, 429, "rate_limited");
    expect(Number(reply.headers.get("retry-after"))).toBe(reply.body.retry_after);
    expect(reply.body.retry_after).toBeGreaterThanOrEqual(1);
    expect(reply.body.retry_after).toBeLessThanOrEqual(60);
  }

  test("a forged X-Forwarded-For (or X-Real-IP, Forwarded) on every request changes nothing", async () => {
    const forged = (i: number) => ({
      "x-forwarded-for": `198.51.100.${i}, 203.0.113.${i}`,
      "x-real-ip": `192.0.2.${i}`,
      forwarded: `for=192.0.2.${i};proto=https`,
      "x-client-ip": `192.0.2.${i}`,
    });
    for (let i = 1; i <= 3; i++) expectCleanError(await login("/auth/login", forged(i)), 401, "unauthorized");
    expectLimited(await login("/auth/login", forged(4)));
    expectLimited(await login("/auth/login", forged(5)));
  });

  test("a trailing slash and a query string count against the same route", async () => {
    expectCleanError(await login("/auth/login"), 401, "unauthorized");
    expectCleanError(await login("/auth/login/"), 401, "unauthorized");
    expectCleanError(await login("/auth/login?attempt=3"), 401, "unauthorized");
    expectLimited(await login("/auth/login/?attempt=4"));
    expectLimited(await login("/auth/login"));
  });

  test("other spellings of the path never reach the handler uncounted", async () => {
    for (let i = 0; i < 3; i++) expect((await login()).status).toBe(401);
    const spellings = ["//auth/login", "/auth//login", "///auth/login", "/AUTH/login", "/Auth/Login", "/auth/login%2F", "/auth/%6Cogin", "/%61uth/login", "/auth/login;x=1", "/auth/./login", "/auth/x/../login", "/auth/login%00", "/auth/login%20"];
    for (const path of spellings) {
      const reply = await login(path);
      // Either no route (404, nothing ran) or the same route, still limited: never a 401 from a
      // handler that ran without being counted.
      if (reply.status !== 404) expectLimited(reply);
      else expectCleanError(reply, 404, "not_found");
    }
    // `//auth/login` in particular reaches no handler (fetch would have sent `/auth/login`).
    expectCleanError(await login("//auth/login"), 404, "not_found");
    // None of them started a new window either.
    expectLimited(await login());
  });

  test("the limit holds for every /auth route, not only login", async () => {
    const routes: [string, string, unknown][] = [
      ["POST", "/auth/signup", { email: "x", password: "y" }],
      ["POST", "/auth/reset-password/request", { email: uniqueEmail("rl") }],
      ["POST", "/auth/reset-password/validate", { token: "x" }],
      ["POST", "/auth/verify-email/confirm", { token: "x" }],
    ];
    for (const [method, path, json] of routes) {
      for (let i = 0; i < 3; i++) expect((await wire(server.url, method, path, { json })).status).not.toBe(429);
      expectLimited(await wire(server.url, method, `${path}/`, { json }));
    }
  });
});

describe("in-process, with chosen peer addresses", () => {
  const group = () => `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}`;
  const badLogin = (ip: string, email = uniqueEmail("rl6"), service = local) => call("POST", "/auth/login", { json: { email, password: WRONG }, ip, service });

  test("an IPv6 neighbour in the same /64, however written, shares the counter; the next /64 does not", async () => {
    const net = group();
    const [a, b, c, d] = net.split(":");
    const neighbours = [`${net}::1`, `${net.toUpperCase()}:0:0:0:2`, `[${a}:${b}:${c}:${d}:ffff:ffff:ffff:ffff]`];
    for (const ip of neighbours) expectCleanError(await badLogin(ip), 401, "unauthorized");
    expectCleanError(await badLogin(`${a}:${b}:${c}:${d}:dead:beef::%eth0`), 429, "rate_limited");
    expectCleanError(await badLogin(`${group()}::1`), 401, "unauthorized");
  });

  test("the per-(email, address) login limit ignores case, spaces and the address's spelling within its /64", async () => {
    const user = await signup();
    remember(user.password);
    remember(user.token);
    remember(user.apiKey);
    const net = group();
    const spellings = [user.email, user.email.toUpperCase(), `  ${user.email} `, `\t${user.email}`, user.email.replace(/^./, (c) => c.toUpperCase())];
    // Every address of one /64 is one client; the per-address route limit is lifted here, so
    // only the (email, address) counter can trip.
    for (const [i, email] of spellings.entries()) expectCleanError(await badLogin(`${net}::${i + 1}`, email, pairs), 401, "unauthorized");
    // The sixth attempt from that /64, even with the right password, is refused.
    const right = await call("POST", "/auth/login", { json: { email: user.email, password: user.password }, ip: `${net}::9`, service: pairs });
    expectCleanError(right, 429, "rate_limited");
    // From another network the owner still gets in.
    const elsewhere = await call("POST", "/auth/login", { json: { email: user.email, password: user.password }, ip: `${group()}::9`, service: pairs });
    expect(elsewhere.status).toBe(200);
  });
});

test("no password, token, JWT or key used here reaches a log line", () => {
  expectNoSecretIn([...server.lines, ...logLines]);
});
