// One suite of authentication tests, run against every protected route, as Unkey's API tests
// do. Each route says how it authenticates and, when its path or body names one of the
// owner's resources, the stranger must get 404 (never 403: no existence leak).
import { describe, expect, test } from "bun:test";
import { SignJWT } from "jose";
import { call, expectErrorShape, signup, subjectOf, testService } from "./service.ts";

type Tenant = Awaited<ReturnType<typeof signup>>;

export interface Fixture {
  owner: Tenant;
  stranger: Tenant;
  /** A key of the owner that has been revoked. */
  revokedKey: string;
  /** A JWT of a person whose sessions were all ended since. */
  endedToken: string;
  /** Ids of the owner's resources, filled by the fixture's `extra` step. */
  ids: Record<string, string>;
}

export interface ProtectedRoute {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: (f: Fixture) => string;
  /** `either`: an API key or a session (simulate). */
  auth: "jwt" | "key" | "either";
  /** A valid body for the route (absent: no body). */
  json?: (f: Fixture) => unknown;
  /** The path or body names a resource of the owner: the stranger gets 404. */
  owned?: boolean;
  /**
   * Why the owner's own credential is not tried here, and which test does: a call that would end
   * the fixture's session (logout, a new password) or needs a live second factor.
   */
  acceptedElsewhere?: string;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const key = (secret: string) => ({ "x-api-key": secret });

/** The claims of `token` (a real session), signed with another key or with none. */
async function forgedJwt(token: string, alg: "HS256" | "none"): Promise<string> {
  const s = subjectOf(token);
  const claims = { sep: s.account_epoch, tid: s.tenant_id, mid: s.member_id, mep: s.member_epoch };
  if (alg === "none") {
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    return `${enc({ alg: "none", typ: "JWT" })}.${enc({ ...claims, sub: s.account_id, iss: "warden", aud: "warden:customer", exp: Math.floor(Date.now() / 1000) + 3600 })}.`;
  }
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setSubject(s.account_id).setIssuer("warden").setAudience("warden:customer").setIssuedAt().setExpirationTime("1h").sign(new TextEncoder().encode("x".repeat(64)));
}

/** Builds the shared fixture; `extra` adds resource ids of the owner (a receipt, a key, ...). */
export async function makeFixture(extra: (f: Fixture) => Promise<Record<string, string>>): Promise<Fixture> {
  const [owner, stranger, ended] = await Promise.all([signup(), signup(), signup()]);
  const created = await call("POST", "/customer/keys", { json: { label: "to revoke" }, headers: bearer(owner.token) });
  await call("POST", `/customer/keys/${created.body.key_id}/revoke`, { headers: bearer(owner.token) });
  const { db } = await testService();
  await db.query("accounts/end_sessions", [subjectOf(ended.token).account_id]);
  const fixture: Fixture = { owner, stranger, revokedKey: created.body.secret, endedToken: ended.token, ids: {} };
  fixture.ids = await extra(fixture);
  return fixture;
}

// Names routes by their pattern: each id the path uses shows as {name}.
export const PLACEHOLDER = { ids: new Proxy({}, { get: (_, name) => `{${String(name)}}` }) } as unknown as Fixture;

export function authSuite(routes: ProtectedRoute[], fixture: () => Promise<Fixture>): void {
  for (const route of routes) {
    describe(`${route.method} ${route.path(PLACEHOLDER)} (${route.auth})`, () => {
      const send = async (headers: Record<string, string>, json?: unknown) => {
        const f = await fixture();
        const body = json !== undefined ? json : route.json?.(f);
        return call(route.method, route.path(f), { headers, json: body });
      };

      test("no credential: 401 unauthorized, checked before the body", async () => {
        expectErrorShape(await send({}), 401, "unauthorized");
        if (route.json) expectErrorShape(await send({}, { not_a_field: true }), 401, "unauthorized");
      });

      test("a bad credential: 401 unauthorized", async () => {
        const f = await fixture();
        if (route.auth !== "jwt") {
          for (const secret of ["nope", "warden_live_" + "a".repeat(32) + "_AAAAAA", f.owner.apiKey.slice(0, -1) + (f.owner.apiKey.endsWith("a") ? "b" : "a")]) {
            expectErrorShape(await send(key(secret)), 401, "unauthorized");
          }
          // The customer's JWT is not an API key.
          if (route.auth === "key") expectErrorShape(await send(bearer(f.owner.token)), 401, "unauthorized");
        }
        if (route.auth !== "key") {
          for (const token of ["not-a-jwt", await forgedJwt(f.owner.token, "HS256"), await forgedJwt(f.owner.token, "none"), f.endedToken]) {
            expectErrorShape(await send(bearer(token)), 401, "unauthorized");
          }
          expectErrorShape(await send({ authorization: "Basic Zm9vOmJhcg==" }), 401, "unauthorized");
          // An API key is not a customer session.
          if (route.auth === "jwt") expectErrorShape(await send(key(f.owner.apiKey)), 401, "unauthorized");
        }
      });

      if (route.auth !== "jwt") {
        test("a revoked key: 401 key_revoked", async () => {
          const f = await fixture();
          expectErrorShape(await send(key(f.revokedKey)), 401, "key_revoked");
        });
      }

      if (route.owned) {
        test("another tenant's id: 404 not_found", async () => {
          const f = await fixture();
          const headers = route.auth === "key" ? key(f.stranger.apiKey) : bearer(f.stranger.token);
          expectErrorShape(await send(headers), 404, "not_found");
        });
      }

      test.skipIf(route.acceptedElsewhere !== undefined)("the owner's credential is accepted", async () => {
        const f = await fixture();
        const reply = await send(route.auth === "key" ? key(f.owner.apiKey) : bearer(f.owner.token));
        expect(reply.status).toBeLessThan(500);
        expect([401, 404]).not.toContain(reply.status);
      });
    });
  }
}
