import { describe, expect, test } from "bun:test";
import { SignJWT, base64url } from "jose";
import { call, expectErrorShape, signup, subjectOf, testService, uniqueEmail } from "../helpers/service.ts";

const simulateWith = (token: string) => call("POST", "/v1/simulate", { json: { preset: "read_document" }, headers: { authorization: `Bearer ${token}` } });

describe("POST /auth/login", () => {
  test("right credentials give a 24 h JWT for the tenant", async () => {
    const user = await signup();
    const reply = await call("POST", "/auth/login", { json: { email: user.email.toUpperCase(), password: user.password } });
    expect(reply.status).toBe(200);
    expect(reply.body.tenant_id).toBe(user.tenantId);
    const lifetime = Date.parse(reply.body.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3600_000);
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(reply.body.token.split(".")[1])));
    expect(claims.exp - claims.iat).toBe(24 * 3600);
    expect((await simulateWith(reply.body.token)).status).toBe(200);
  });

  test("unknown email and wrong password get the same answer", async () => {
    const user = await signup();
    const wrong = await call("POST", "/auth/login", { json: { email: user.email, password: "not the password" } });
    const unknown = await call("POST", "/auth/login", { json: { email: uniqueEmail("ghost"), password: "not the password" } });
    expectErrorShape(wrong, 401, "unauthorized");
    expectErrorShape(unknown, 401, "unauthorized");
    const strip = (b: Record<string, unknown>) => ({ ...b, request_id: undefined });
    expect(strip(wrong.body)).toEqual(strip(unknown.body));
  });

  test("an unknown email still pays for a bcrypt verification", async () => {
    // Compare against a wrong password for a real account: both do one bcrypt verify, so neither
    // should be much faster. Cost 4 in tests is about 1 ms, so compare medians loosely.
    const user = await signup();
    const time = async (email: string) => {
      const samples: number[] = [];
      for (let i = 0; i < 15; i++) {
        const t0 = performance.now();
        await call("POST", "/auth/login", { json: { email, password: "not the password" } });
        samples.push(performance.now() - t0);
      }
      return samples.sort((a, b) => a - b)[7];
    };
    const { service } = await testService();
    const dummyCost = Number((await service.deps.dummyPasswordHash).split("$")[2]);
    expect(dummyCost).toBe(service.deps.config.bcryptCost);
    const known = await time(user.email);
    const unknown = await time(uniqueEmail("ghost"));
    expect(unknown).toBeGreaterThan(known * 0.3);
  });

  test("a missing field is invalid_request, not unauthorized", async () => {
    expectErrorShape(await call("POST", "/auth/login", { json: { email: "a@example.com" } }), 400, "invalid_request");
  });
});

describe("JWT checks", () => {
  async function forge(claims: Record<string, unknown>, opts: { alg?: string; key?: Uint8Array; header?: Record<string, unknown> } = {}) {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ sep: 0, ...claims })
      .setProtectedHeader({ alg: opts.alg ?? "HS256", ...opts.header })
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(opts.key ?? new TextEncoder().encode("x".repeat(64)));
  }

  test("no token, a malformed header, garbage: 401 unauthorized", async () => {
    expectErrorShape(await call("POST", "/v1/simulate", { json: { preset: "read_document" }, headers: { authorization: "Bearer" } }), 401, "unauthorized");
    expectErrorShape(await call("POST", "/v1/simulate", { json: { preset: "read_document" }, headers: { authorization: "Basic dXNlcjpwYXNz" } }), 401, "unauthorized");
    expectErrorShape(await simulateWith("not.a.jwt"), 401, "unauthorized");
  });

  test("alg none is refused", async () => {
    const user = await signup();
    const [, payload] = user.token.split(".");
    const none = `${base64url.encode(JSON.stringify({ alg: "none", typ: "JWT" }))}.${payload}.`;
    expectErrorShape(await simulateWith(none), 401, "unauthorized");
  });

  test("a tampered payload is refused", async () => {
    const user = await signup();
    const other = await signup();
    const [header, payload, sig] = user.token.split(".");
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload)));
    const tampered = `${header}.${base64url.encode(JSON.stringify({ ...claims, sub: other.tenantId }))}.${sig}`;
    expectErrorShape(await simulateWith(tampered), 401, "unauthorized");
  });

  test("a token signed with another secret, or wrong iss/aud, is refused", async () => {
    const user = await signup();
    expectErrorShape(await simulateWith(await forge({ sub: user.tenantId, iss: "warden", aud: "warden:customer" })), 401, "unauthorized");
    const { service } = await testService();
    const good = await service.deps.sessions.issue(await subjectOf(user.token));
    expect((await simulateWith(good.token)).status).toBe(200);
  });

  test("an expired token gets 401 token_expired", async () => {
    const user = await signup();
    const { service } = await testService();
    const old = await service.deps.sessions.issue(await subjectOf(user.token), new Date(Date.now() - 25 * 3600_000));
    const reply = await simulateWith(old.token);
    expectErrorShape(reply, 401, "token_expired");
  });

  test("ending sessions (epoch bump) kills tokens issued before", async () => {
    const user = await signup();
    const { db } = await testService();
    await db.query("accounts/end_sessions", [(await subjectOf(user.token)).account_id]);
    expectErrorShape(await simulateWith(user.token), 401, "unauthorized");
    const fresh = await call("POST", "/auth/login", { json: { email: user.email, password: user.password } });
    expect((await simulateWith(fresh.body.token)).status).toBe(200);
  });

  test("an HS256 token for a tenant or member that does not exist is refused", async () => {
    const { service } = await testService();
    const user = await signup();
    const real = await subjectOf(user.token);
    const ghost = await service.deps.sessions.issue({ ...real, tenant_id: "cust_AAAAAAAAAAAAAAAAAAAAAA" });
    expectErrorShape(await simulateWith(ghost.token), 401, "unauthorized");
    const ghostMember = await service.deps.sessions.issue({ ...real, member_id: "mbr_AAAAAAAAAAAAAAAAAAAAAA" });
    expectErrorShape(await simulateWith(ghostMember.token), 401, "unauthorized");
    expectErrorShape(await simulateWith(ghost.token), 401, "unauthorized");
  });

  test("an API key is not a bearer token and a JWT is not an API key", async () => {
    const user = await signup();
    expectErrorShape(await simulateWith(user.apiKey), 401, "unauthorized");
    expectErrorShape(await call("POST", "/v1/simulate", { json: { preset: "read_document" }, headers: { "x-api-key": user.token } }), 401, "unauthorized");
  });
});
