// The front door and the error vocabulary, through the app as a client sees them.
import { describe, expect, test } from "bun:test";
import { createService } from "../../src/app/service.ts";
import { DbUnavailableError } from "../../src/db/index.ts";
import type { Db } from "../../src/db/index.ts";
import { createLogger } from "../../src/log.ts";
import { BASE, call, expectErrorShape, logLines, openTestDb, signup, testConfig, testService } from "../helpers/service.ts";

describe("X-Request-ID", () => {
  test("a valid caller id is echoed in the header and the error body", async () => {
    const reply = await call("GET", "/nope", { headers: { "x-request-id": "caller-id_1.2:3" } });
    expectErrorShape(reply, 404, "not_found");
    expect(reply.headers.get("x-request-id")).toBe("caller-id_1.2:3");
    expect(reply.body.request_id).toBe("caller-id_1.2:3");
  });

  test("without one the server generates a req_ id", async () => {
    const reply = await call("GET", "/health");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{22}$/);
  });

  test("128 visible characters are accepted, 129 are not", async () => {
    const ok = await call("GET", "/health", { headers: { "x-request-id": "a".repeat(128) } });
    expect(ok.headers.get("x-request-id")).toBe("a".repeat(128));
    const long = await call("GET", "/health", { headers: { "x-request-id": "a".repeat(129) } });
    expectErrorShape(long, 400, "invalid_request_id");
    expect(long.body.request_id).toMatch(/^req_/);
  });

  for (const [name, value] of [["a space", "has space"], ["a tab", "a\tb"], ["non-ASCII", "caf\u00e9"]]) {
    test(`${name} is refused`, async () => {
      const headers = new Headers();
      // Headers normalise some values; build the request by hand to send them as given.
      try {
        headers.set("x-request-id", value);
      } catch {
        return; // the platform refuses to even send it
      }
      expectErrorShape(await call("GET", "/health", { headers: Object.fromEntries(headers) }), 400, "invalid_request_id");
    });
  }
});

describe("bodies", () => {
  test("a body that is not JSON gets 415", async () => {
    const reply = await call("POST", "/auth/login", { body: "email=a&password=b", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expectErrorShape(reply, 415, "unsupported_media_type");
  });

  test("a JSON body without a content type gets 415", async () => {
    const reply = await call("POST", "/v1/simulate", { body: '{"preset":"small_payment"}', headers: { "content-type": "" } });
    expectErrorShape(reply, 415, "unsupported_media_type");
  });

  test("application/json with a charset is fine", async () => {
    const reply = await call("POST", "/auth/login", { body: '{"email":"x@example.com","password":"nope-nope"}', headers: { "content-type": "application/json; charset=utf-8" } });
    expectErrorShape(reply, 401, "unauthorized");
  });

  test("broken JSON gets invalid_json", async () => {
    expectErrorShape(await call("POST", "/auth/login", { body: '{"email":', headers: { "content-type": "application/json" } }), 400, "invalid_json");
  });

  test("invalid UTF-8 gets invalid_json", async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    expectErrorShape(await call("POST", "/auth/login", { body: bytes, headers: { "content-type": "application/json" } }), 400, "invalid_json");
  });

  test("a declared body over 64 KiB gets 413 before it is read", async () => {
    const body = JSON.stringify({ email: "a@example.com", password: "x".repeat(70_000) });
    expectErrorShape(await call("POST", "/auth/login", { body, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
  });

  test("exactly 64 KiB is read; one byte more is not", async () => {
    const pad = (n: number) => JSON.stringify({ email: "a@example.com", password: "x".repeat(n) });
    const base = pad(0).length;
    const exact = await call("POST", "/auth/login", { body: pad(65_536 - base), headers: { "content-type": "application/json" } });
    expectErrorShape(exact, 401, "unauthorized");
    const over = await call("POST", "/auth/login", { body: pad(65_537 - base), headers: { "content-type": "application/json" } });
    expectErrorShape(over, 413, "payload_too_large");
  });

  test("a streamed body without a length is cut at 64 KiB", async () => {
    const chunk = new TextEncoder().encode("x".repeat(16_384));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"email":"a@example.com","password":"'));
        if (sent++ < 8) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const reply = await call("POST", "/auth/login", { body: stream, headers: { "content-type": "application/json", "transfer-encoding": "chunked" } });
    expectErrorShape(reply, 413, "payload_too_large");
  });

  test("unknown fields are refused with their path, without echoing the schema", async () => {
    const reply = await call("POST", "/auth/login", { json: { email: "a@example.com", password: "whatever1", admin: true } });
    expectErrorShape(reply, 400, "invalid_request");
    expect(reply.body.message).toContain("/admin");
    expect(reply.text).not.toContain("properties");
    expect(reply.text).not.toContain("additionalProperties");
    expect(reply.text).not.toContain('"expected"');
    expect(reply.text).not.toContain("summary");
  });

  test("wrong types and missing fields get invalid_request naming the field", async () => {
    const wrong = await call("POST", "/auth/login", { json: { email: 42, password: "whatever1" } });
    expectErrorShape(wrong, 400, "invalid_request");
    expect(wrong.body.message).toContain("/email");
    const missing = await call("POST", "/auth/signup", { json: { email: "a@example.com" } });
    expectErrorShape(missing, 400, "invalid_request");
    expect(missing.body.message).toContain("password");
  });

  for (const body of ["null", "[]", '"text"', "42", "true"]) {
    test(`a JSON ${body} body gets invalid_request`, async () => {
      expectErrorShape(await call("POST", "/auth/login", { body, headers: { "content-type": "application/json" } }), 400, "invalid_request");
    });
  }

  test("an empty body on a route that needs one gets invalid_request", async () => {
    expectErrorShape(await call("POST", "/auth/login", { headers: { "content-type": "application/json" } }), 400, "invalid_request");
  });
});

describe("routing and transport", () => {
  test("unknown routes and methods get 404 not_found", async () => {
    expectErrorShape(await call("GET", "/v2/simulate"), 404, "not_found");
    expectErrorShape(await call("DELETE", "/auth/login"), 404, "not_found");
  });

  test("plain HTTP is refused with 403 https_required", async () => {
    expectErrorShape(await call("GET", "/health", { base: "http://warden.test" }), 403, "https_required");
  });

  test("behind a trusted proxy, only X-Forwarded-Proto: https is accepted", async () => {
    const { db } = await testService();
    const proxied = await createService(testConfig({ trustProxy: true }), { db, log: createLogger("silent") });
    const ok = await call("GET", "/health", { base: "http://warden.test", headers: { "x-forwarded-proto": "https" }, service: proxied });
    expect(ok.status).toBe(200);
    expectErrorShape(await call("GET", "/health", { base: "http://warden.test", headers: { "x-forwarded-proto": "http" }, service: proxied }), 403, "https_required");
    expectErrorShape(await call("GET", "/health", { base: "http://warden.test", service: proxied }), 403, "https_required");
  });

  test("without TRUST_PROXY a forged X-Forwarded-Proto does not help", async () => {
    expectErrorShape(await call("GET", "/health", { base: "http://warden.test", headers: { "x-forwarded-proto": "https" } }), 403, "https_required");
  });

  test("every response carries HSTS, errors included", async () => {
    for (const reply of [await call("GET", "/health"), await call("GET", "/nope")]) {
      expect(reply.headers.get("strict-transport-security")).toMatch(/^max-age=\d{8,}/);
    }
  });

  test("the peer address is asked for only when something reads it, and then once", async () => {
    const { service } = await testService();
    let asked = 0;
    const peer = () => {
      asked++;
      return "203.0.113.77";
    };
    expect((await service.handle(new Request(BASE + "/health"), { ip: peer })).status).toBe(200);
    expect(asked).toBe(0);
    // A failed log-in reads it twice (its brute-force limit and its security event).
    const before = logLines.length;
    const body = JSON.stringify({ email: `lazy.peer.${Date.now()}@example.com`, password: "not the password at all" });
    const login = await service.handle(new Request(BASE + "/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body }), { ip: peer });
    expect(login.status).toBe(401);
    expect(asked).toBe(1);
    expect(logLines.slice(before).some((line) => line.includes('"ip":"203.0.113.77"'))).toBe(true);
  });

  test("/health names the database", async () => {
    const { db } = await testService();
    const reply = await call("GET", "/health");
    expect(reply.body).toEqual({ ok: true, database: db.kind, version: expect.any(String) });
  });
});

describe("OpenAPI", () => {
  test("/openapi.json documents every route with its JSON body", async () => {
    const reply = await call("GET", "/openapi.json");
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toMatch(/^3\.1/);
    for (const path of ["/health", "/auth/signup", "/auth/login", "/v1/simulate", "/api/simulate", "/v1/presets", "/.well-known/jwks.json"]) {
      expect(Object.keys(reply.body.paths)).toContain(path);
    }
    const signupBody = reply.body.paths["/auth/signup"].post.requestBody.content["application/json"].schema;
    expect(signupBody.required).toEqual(["email", "password"]);
    expect(signupBody.additionalProperties).toBe(false);
  });

  test("/docs is an HTML page", async () => {
    const reply = await call("GET", "/docs");
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toContain("text/html");
  });
});

describe("failures inside", () => {
  async function serviceWith(fail: (name: string) => Error | undefined) {
    const { db } = await testService();
    const broken: Db = {
      ...db,
      query: async (...args) => {
        const err = fail(args[0]);
        if (err) throw err;
        return db.query(...args);
      },
      one: async (...args) => {
        const err = fail(args[0]);
        if (err) throw err;
        return db.one(...args);
      },
    };
    const lines: string[] = [];
    const service = await createService(testConfig(), { db: broken, log: createLogger("info", (l) => lines.push(l)) });
    return { service, lines };
  }

  test("an unexpected error is a 500 internal_error without stack, SQL or detail", async () => {
    const { service, lines } = await serviceWith((name) => (name === "system/ping" ? new Error("SELECT password_hash FROM tenants at /src/secret.ts:1") : undefined));
    const reply = await call("GET", "/health", { service });
    expectErrorShape(reply, 500, "internal_error");
    expect(reply.text).not.toContain("SELECT");
    expect(reply.text).not.toContain(".ts");
    // The operator still learns what happened, under the same request id.
    expect(lines.some((l) => l.includes("unexpected_error") && l.includes(reply.body.request_id))).toBe(true);
  });

  test("an unreachable database is a quick 503 unavailable with Retry-After", async () => {
    const { service } = await serviceWith((name) => (name === "system/ping" ? new DbUnavailableError("connect ECONNREFUSED") : undefined));
    const reply = await call("GET", "/health", { service });
    expectErrorShape(reply, 503, "unavailable");
    expect(Number(reply.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(reply.text).not.toContain("ECONNREFUSED");
  });
});

describe("request log", () => {
  test("one JSON line per request with method, route, status, duration and request id", async () => {
    const id = `log-check-${crypto.randomUUID()}`;
    await call("GET", "/health", { headers: { "x-request-id": id } });
    const lines = logLines.map((l) => JSON.parse(l)).filter((l) => l.request_id === id);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ event: "request", method: "GET", route: "/health", status: 200, request_id: id });
    expect(typeof lines[0].duration_ms).toBe("number");
  });

  test("no password, token or key reaches the log", async () => {
    const password = `Sekret-${crypto.randomUUID()}`;
    const user = await signup(undefined, password);
    await call("POST", "/auth/login", { json: { email: user.email, password } });
    await call("POST", "/v1/simulate", { json: { preset: "small_payment" }, headers: { "x-api-key": user.apiKey } });
    await call("POST", "/v1/simulate", { json: { preset: "small_payment" }, headers: { authorization: `Bearer ${user.token}` } });
    const all = logLines.join("\n");
    for (const secret of [password, user.token, user.apiKey, user.apiKey.slice(12, 44)]) expect(all).not.toContain(secret);
  });
});
