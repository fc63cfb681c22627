// GET /openapi.json (src/app/openapi.ts): the same bytes whatever came before, every operation
// callable by a generated client and public ones marked so, and every real response described:
// the front door's answers on every operation, credentials' answers on every secured one, and a
// client's day of calls, each reply checked against the document by call() (test/helpers/openapi.ts).
import { beforeAll, describe, expect, test } from "bun:test";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { apiKey, bearer, SMALL_PAYMENT, setPlan } from "../helpers/customer.ts";
import { ResponseChecker } from "../helpers/openapi.ts";
import { BASE, call, signup, testConfig, testService, uniqueEmail, GOOD_PASSWORD } from "../helpers/service.ts";

type Json = Record<string, any>;
let doc: Json;

beforeAll(async () => {
  doc = (await call("GET", "/openapi.json")).body;
});

async function freshService(): Promise<Service> {
  const { db } = await testService();
  return createService(testConfig(), { db, log: createLogger("silent") });
}

const served = async (service: Service) => (await service.handle(new Request(`${BASE}/openapi.json`))).text();

/** Every operation of the document, with a URL that reaches it (ids of nothing: the route still runs its front door). */
function operations(): { method: string; path: string; url: string; op: Json }[] {
  return Object.entries<Json>(doc.paths).flatMap(([path, methods]) =>
    Object.entries<Json>(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      url: path.replace("{tile}", "0/000.p/1").replace(/\{[^}]+\}/g, (p) => (p.includes("version") ? "999999" : "x_nothing")),
      op,
    })),
  );
}

const isPublic = (op: Json) => (op.security as Json[]).length === 0 || (op.security as Json[]).some((s) => Object.keys(s).length === 0);

describe("the same bytes whatever came before", () => {
  test("a fresh app, one that served a signup, a failed login and a protect first, and one made after them serve one document", async () => {
    const first = await freshService();
    const before = await served(first);
    const busy = await freshService();
    const owner = await signup();
    for (const service of [busy, first]) {
      const opts = { service };
      expect((await call("POST", "/auth/signup", { json: { email: uniqueEmail("oa"), password: GOOD_PASSWORD }, ...opts })).status).toBe(201);
      expect((await call("POST", "/auth/login", { json: { email: "nobody@example.com", password: "wrong password here" }, ...opts })).status).toBe(401);
      expect((await call("POST", "/v1/protect", { json: SMALL_PAYMENT, headers: apiKey(owner.apiKey), ...opts })).status).toBe(200);
      expect((await call("GET", "/customer/keys", { headers: bearer(owner.token), ...opts })).status).toBe(200);
      expect((await call("POST", "/customer/keys", { body: "{", headers: { ...bearer(owner.token), "content-type": "application/json" }, ...opts })).status).toBe(400);
    }
    const after = await freshService();
    const texts = [before, await served(first), await served(busy), await served(after)];
    try {
      for (const text of texts) expect(text).toBe(before);
      // Objects say whether they are open: none is left for the validator to decide.
      const undecided: string[] = [];
      const walk = (s: unknown, at: string) => {
        if (!s || typeof s !== "object") return;
        const o = s as Json;
        if (o.type === "object" && o.properties && !("additionalProperties" in o)) undecided.push(at);
        for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`);
      };
      walk(JSON.parse(before), "#");
      expect(undecided).toEqual([]);
    } finally {
      await Promise.all([first.close(), busy.close(), after.close()]);
    }
  }, 60_000);
});

describe("what a generated client needs", () => {
  test("the document names its server, the service's PUBLIC_URL", async () => {
    const { service } = await testService();
    expect(doc.servers).toEqual([{ url: service.deps.config.publicUrl, description: expect.any(String) }]);
  });

  test("every operation states its security; the public ones say none", () => {
    const missing = operations().filter((o) => !Array.isArray(o.op.security)).map((o) => `${o.method} ${o.path}`);
    expect(missing).toEqual([]);
    const open = operations().filter((o) => (o.op.security as Json[]).length === 0).map((o) => `${o.method} ${o.path}`);
    expect(open.sort()).toEqual(
      [
        "GET /.well-known/authzen-configuration", "GET /.well-known/jwks.json", "GET /.well-known/oauth-protected-resource/mcp/{gateway_id}", "GET /features/catalog", "GET /health", "GET /livez", "GET /readyz",
        "GET /v1/presets", "POST /auth/invitations/preview", "POST /auth/login", "POST /auth/mfa/verify", "POST /auth/reset-password/confirm", "POST /auth/reset-password/request",
        "POST /auth/reset-password/validate", "POST /auth/signup", "POST /auth/verify-email/confirm",
        // OAuth for agents: the protocol's own endpoints, which a client calls before it holds anything.
        "GET /.well-known/oauth-authorization-server", "GET /oauth/authorize", "POST /oauth/register", "POST /oauth/revoke", "POST /oauth/token",
      ].sort(),
    );
    // Accepting an invitation takes a session when there is one.
    expect(doc.paths["/auth/invitations/accept"].post.security).toEqual([{}, { bearer: [] }]);
  });

  test("no path has a wildcard: the tile route's is the named parameter {tile}, and it lists its bytes", () => {
    expect(Object.keys(doc.paths).filter((p) => p.includes("*"))).toEqual([]);
    const tile = doc.paths["/customer/log/tile/{tile}"].get;
    expect(tile.operationId).toBe("getCustomerLogTileByTile");
    expect(tile.parameters).toEqual([{ name: "tile", in: "path", required: true, schema: expect.objectContaining({ type: "string" }) }]);
    expect(Object.keys(tile.responses[200].content)).toEqual(["application/octet-stream"]);
    expect(Object.keys(doc.paths["/customer/receipts/export"].get.responses[200].content)).toEqual(["application/x-ndjson"]);
  });

  test("the tile route answers the path a generated client builds, its slashes percent-encoded", async () => {
    const owner = await signup();
    await call("POST", "/v1/protect", { json: SMALL_PAYMENT, headers: apiKey(owner.apiKey) });
    // Signup records no event: the protect is the log's one receipt.
    const raw = await call("GET", "/customer/log/tile/0/000.p/1", { headers: bearer(owner.token) });
    const encoded = await call("GET", `/customer/log/tile/${encodeURIComponent("0/000.p/1")}`, { headers: bearer(owner.token) });
    expect([raw.status, encoded.status]).toEqual([200, 200]);
    expect(encoded.text).toBe(raw.text);
  });

  test("a body the document marks optional may be left out: the operation answers without one", async () => {
    const optional = operations().filter((o) => o.op.requestBody && o.op.requestBody.required === false);
    expect(optional.map((o) => `${o.method} ${o.path}`).sort()).toEqual(
      ["POST /auth/logout", "POST /auth/verify-email/request", "POST /customer/account/mfa/enroll", "POST /customer/keys/{key_id}/rotate"].sort(),
    );
    const owner = await signup();
    const jwt = bearer(owner.token);
    const keyId = (await call("GET", "/customer/keys", { headers: jwt })).body.keys[0].key_id;
    // Logout last: it ends the session.
    for (const { method, path } of optional.sort((a, b) => Number(a.path === "/auth/logout") - Number(b.path === "/auth/logout"))) {
      const reply = await call(method, path.replace("{key_id}", keyId), { headers: jwt });
      expect({ route: `${method} ${path}`, ok: reply.status < 300 }).toEqual({ route: `${method} ${path}`, ok: true });
    }
  });

  test("each error status has one body: its codes, and the fields each code adds, closed", () => {
    const fieldsOf = (status: number, code: string): string[] => {
      const schema = doc.components.schemas[`Error${status}`];
      const variant = (schema.oneOf ?? [schema]).find((v: Json) => v.properties.error.const === code || v.properties.error.enum?.includes(code));
      expect(variant.additionalProperties).toBe(false);
      return Object.keys(variant.properties);
    };
    expect(fieldsOf(400, "invalid_request_id")).toEqual(["ok", "error", "message", "request_id"]);
    expect(fieldsOf(403, "plan_required")).toContain("required_plan");
    expect(fieldsOf(403, "feature_not_granted")).toContain("feature");
    expect(fieldsOf(403, "forbidden_role")).toContain("required_role");
    expect(fieldsOf(429, "quota_exceeded")).toContain("limit");
    expect(fieldsOf(429, "rate_limited")).toEqual(expect.arrayContaining(["retry_after", "limit"]));
    expect(fieldsOf(503, "unavailable")).toContain("retry_after");
    expect(fieldsOf(422, "policy_tests_failed")).toContain("results");
    expect(fieldsOf(401, "token_expired")).toEqual(["ok", "error", "message", "request_id"]);
  });
});

describe("the front door's answers, on every operation, are documented", () => {
  // Each call below goes through call(), which fails on a reply the document does not describe.
  test("a bad X-Request-ID: 400 invalid_request_id", async () => {
    for (const { method, url } of operations()) {
      const reply = await call(method, url, { headers: { "x-request-id": "has space" } });
      expect({ route: `${method} ${url}`, error: reply.body?.error }).toEqual({ route: `${method} ${url}`, error: "invalid_request_id" });
    }
  });

  test("plain HTTP: 403 https_required", async () => {
    for (const { method, url } of operations()) {
      const reply = await call(method, url, { base: "http://warden.test" });
      expect({ route: `${method} ${url}`, status: reply.status }).toEqual({ route: `${method} ${url}`, status: 403 });
    }
  });

  test("a declared body over 64 KiB: 413; a body that is not JSON where one may be sent: 415 (400 on the AuthZEN routes, as their clients expect)", async () => {
    for (const { method, url } of operations()) {
      const reply = await call(method, url, { headers: { "content-length": "70000" } });
      expect({ route: `${method} ${url}`, status: reply.status }).toEqual({ route: `${method} ${url}`, status: 413 });
      if (method === "GET") continue;
      const text = await call(method, url, { body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } });
      // OAuth's token and revocation endpoints take forms, as RFC 6749 and RFC 7009 say.
      if (url === "/oauth/token" || url === "/oauth/revoke") {
        expect({ route: `${method} ${url}`, status: text.status }).toEqual({ route: `${method} ${url}`, status: url === "/oauth/token" ? 401 : 400 });
        continue;
      }
      expect({ route: `${method} ${url}`, status: text.status }).toEqual({ route: `${method} ${url}`, status: url.startsWith("/access/v1/") ? 400 : 415 });
    }
  });

  test("no credential, or a wrong one: 401 on every secured operation", async () => {
    // The development mailbox is 404 before anything else where mail is not written to files.
    const secured = operations().filter((o) => !isPublic(o.op) && o.path !== "/dev/mailbox");
    expect(secured.length).toBeGreaterThan(50);
    for (const { method, url, op } of secured) {
      const json = method === "GET" ? undefined : {};
      const takesKey = (op.security as Json[]).some((s) => "apiKey" in s);
      for (const headers of [{}, takesKey ? apiKey(`warden_live_${"A".repeat(40)}`) : bearer("not.a.jwt")]) {
        const reply = await call(method, url, { json, headers });
        expect({ route: `${method} ${url}`, status: reply.status }).toEqual({ route: `${method} ${url}`, status: 401 });
      }
    }
  });
});

describe("a client's calls, success and failure, are documented", () => {
  test("signup to offline proof: keys, decisions, receipts, policy, webhooks, team, plans", async () => {
    const owner = await signup();
    await setPlan(owner.tenantId, "enterprise");
    const jwt = bearer(owner.token);
    const key = apiKey(owner.apiKey);
    const ok = async (method: string, path: string, opts: Parameters<typeof call>[2] = {}) => {
      const reply = await call(method, path, opts);
      expect({ route: `${method} ${path}`, status: reply.status < 300 }).toEqual({ route: `${method} ${path}`, status: true });
      return reply.body;
    };
    for (const path of ["/health", "/livez", "/readyz", "/.well-known/jwks.json", "/features/catalog", "/.well-known/authzen-configuration"]) await ok("GET", path);
    const { presets } = await ok("GET", "/v1/presets");
    const login = await ok("POST", "/auth/login", { json: { email: owner.email, password: GOOD_PASSWORD } });
    await ok("GET", "/auth/tenants", { headers: bearer(login.token) });
    await ok("GET", "/auth/verify-email/status", { headers: jwt });
    await ok("POST", "/auth/reset-password/validate", { json: { token: "x".repeat(43) } });
    await ok("GET", "/customer/account", { headers: jwt });
    await ok("GET", "/customer/dashboard", { headers: jwt });
    await ok("GET", "/customer/usage", { headers: jwt });

    const made = await ok("POST", "/customer/keys", { json: { label: "agent", expires_at: new Date(Date.now() + 86_400_000).toISOString(), limits: { per_second: 50 } }, headers: jwt });
    await ok("GET", "/customer/keys", { headers: jwt });
    await ok("PATCH", `/customer/keys/${made.key_id}`, { json: { metadata: { agent: "test" } }, headers: jwt });
    const rotated = await ok("POST", `/customer/keys/${made.key_id}/rotate`, { json: { overlap: 60 }, headers: jwt });
    await ok("POST", `/customer/keys/${rotated.key_id}/revoke`, { headers: jwt });

    const allowed = await ok("POST", "/v1/protect", { json: SMALL_PAYMENT, headers: key });
    await ok("POST", "/v1/verify", { json: { receipt: allowed }, headers: key });
    await ok("POST", "/v1/execute", { json: { receipt_id: allowed.receipt_id }, headers: key });
    await ok("POST", "/v1/simulate", { json: { preset: presets[0].preset }, headers: key });
    await ok("POST", "/access/v1/evaluation", { json: { subject: { type: "agent", id: "a" }, action: { name: "document.read" }, resource: { type: "docs", id: "1" } }, headers: key });
    await ok("POST", "/access/v1/evaluations", { json: { evaluations: [{ subject: { type: "agent", id: "a" }, action: { name: "document.read" }, resource: { type: "docs", id: "1" } }] }, headers: key });

    const head = await ok("GET", "/customer/receipts/checkpoint", { headers: jwt });
    await ok("GET", "/customer/receipts?limit=2", { headers: jwt });
    await ok("GET", `/customer/receipts/${allowed.receipt_id}`, { headers: jwt });
    await ok("GET", `/customer/receipts/${allowed.receipt_id}/proof?tree_size=${head.tree_size}`, { headers: jwt });
    await ok("GET", `/customer/receipts/consistency?from=1&to=${head.tree_size}`, { headers: jwt });
    await ok("GET", "/customer/receipts/export", { headers: jwt });
    await ok("GET", "/customer/audit", { headers: jwt });

    const policy = await ok("GET", "/customer/policy", { headers: jwt });
    await ok("GET", "/customer/policy/versions", { headers: jwt });
    await ok("GET", "/customer/policy/versions/1", { headers: jwt });
    await ok("POST", "/customer/policy/test", { json: { cases: [] }, headers: jwt });
    await ok("GET", "/customer/policy/tests", { headers: jwt });
    await ok("POST", "/customer/policy/impact", { json: { document: policy.document }, headers: jwt });

    await ok("GET", "/customer/webhooks", { headers: jwt });
    await ok("GET", "/customer/members", { headers: jwt });
    await ok("GET", "/customer/members/invitations", { headers: jwt });
    await ok("GET", "/customer/settings", { headers: jwt });
    await ok("GET", "/customer/approvals", { headers: jwt });
    await ok("GET", "/customer/upgrades", { headers: jwt });
    await ok("POST", "/auth/logout", { json: {}, headers: bearer(login.token) });

    // And their refusals, each with its code's fields.
    const viewer = await call("GET", "/customer/keys", { headers: bearer(login.token) });
    expect(viewer.status).toBe(401);
    const duplicate = await call("POST", "/auth/signup", { json: { email: owner.email, password: GOOD_PASSWORD } });
    expect(duplicate.body.error).toBe("email_taken");
    const badCursor = await call("GET", "/customer/receipts?cursor=nope", { headers: jwt });
    expect(badCursor.body.error).toBe("invalid_request");
    const gone = await call("GET", "/customer/receipts/rcpt_nothing", { headers: jwt });
    expect(gone.status).toBe(404);
    const twice = await call("POST", "/v1/execute", { json: { receipt_id: allowed.receipt_id }, headers: key });
    expect(twice.body.error).toBe("already_executed");
    const revoked = await call("POST", "/v1/protect", { json: SMALL_PAYMENT, headers: apiKey(rotated.secret) });
    expect(revoked.body.error).toBe("key_revoked");
  }, 60_000);

  test("quotas and limits send their fields: limit, retry_after, required_plan", async () => {
    const owner = await signup();
    const jwt = bearer(owner.token);
    // A free tenant: custom policies need a higher plan.
    const tests = await call("PUT", "/customer/policy/tests", { json: { cases: [] }, headers: jwt });
    expect(tests.body).toMatchObject({ error: "plan_required", required_plan: expect.any(String) });
    // A key that may protect once a second, and once a day.
    const made = (await call("POST", "/customer/keys", { json: { label: "tight", limits: { per_second: 1, burst: 1, protect_per_day: 1 } }, headers: jwt })).body;
    const key = apiKey(made.secret);
    expect((await call("POST", "/v1/protect", { json: SMALL_PAYMENT, headers: key })).status).toBe(200);
    const limited = await call("POST", "/v1/protect", { json: SMALL_PAYMENT, headers: key });
    expect(limited.status).toBe(429);
    expect(limited.body.error === "rate_limited" ? limited.body.retry_after : limited.body.limit).toBeDefined();
  });
});

describe("the check itself", () => {
  // ResponseChecker is what call() runs: it must refuse what the document does not describe.
  test("an undocumented status, an undocumented field, a wrong type or content type is refused; an unknown path is not its business", async () => {
    const checker = new ResponseChecker(doc);
    const health = await call("GET", "/health");
    const as = (status: number, body: unknown, contentType = "application/json") => ({ status, contentType, body });
    expect(checker.problems("GET", "/health", as(200, health.body))).toEqual([]);
    expect(checker.problems("GET", "/health", as(418, health.body))![0]).toContain("status not documented");
    expect(checker.problems("GET", "/health", as(200, { ...health.body, extra: 1 }))!.join()).toContain("additional");
    expect(checker.problems("GET", "/health", as(200, { ...health.body, version: 1 })))!.not.toEqual([]);
    expect(checker.problems("GET", "/health", as(200, health.body, "text/plain"))![0]).toContain("content type");
    const error = { ok: false, error: "rate_limited", message: "m", request_id: "r" };
    expect(checker.problems("POST", "/v1/protect", as(429, { ...error, retry_after: 1 }))).toEqual([]);
    expect(checker.problems("POST", "/v1/protect", as(429, error))).not.toEqual([]);
    expect(checker.problems("POST", "/v1/protect", as(429, { ...error, retry_after: 1, required_role: "owner" }))).not.toEqual([]);
    expect(checker.problems("GET", "/customer/log/tile/0/x001/000.p/5", as(200, undefined, "application/octet-stream"))).toEqual([]);
    expect(checker.operationOf("GET", "/customer/receipts/checkpoint")).toEqual({ method: "get", path: "/customer/receipts/checkpoint" });
    expect(checker.problems("GET", "/console", as(200, undefined, "text/html"))).toBeUndefined();
  });
});
