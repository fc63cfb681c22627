// What the fuzzer found, pinned down, and the rule behind it: no input, however odd, gets a 5xx,
// and no error body shows a stack trace, SQL, a driver's words or a secret.
import { describe, expect, test } from "bun:test";
import { DbError, DbUnavailableError, type Db } from "../../src/db/index.ts";
import { MAX_JSON_DEPTH } from "../../src/http/body.ts";
import { createService } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { apiKey, bearer } from "../helpers/customer.ts";
import { call, logLines, signup, testConfig, testService } from "../helpers/service.ts";
import { expectCleanError, expectNoSecretIn, remember } from "./helpers.ts";

const NUL = "a\u0000b";

describe("U+0000 in a string that reaches a text column: 400 invalid_request, never 500", () => {
  test("in bodies", async () => {
    const user = await signup();
    for (const s of [user.password, user.token, user.apiKey]) remember(s);
    const cases: [string, string, unknown, Record<string, string>?][] = [
      ["POST", "/auth/login", { email: `x${NUL}@example.com`, password: "whatever1" }],
      ["POST", "/auth/reset-password/request", { email: NUL }],
      ["POST", "/auth/reset-password/validate", { token: NUL }],
      ["POST", "/auth/reset-password/confirm", { token: NUL, password: "a fine passphrase" }],
      ["POST", "/auth/verify-email/confirm", { token: NUL }],
      ["POST", "/customer/upgrades/request", { requested_plan: `pro${NUL}`, reason: "x" }, bearer(user.token)],
      ["POST", "/customer/upgrades/request", { requested_plan: "pro", reason: NUL }, bearer(user.token)],
    ];
    for (const [method, path, json, headers] of cases) {
      const reply = await call(method, path, { json, headers });
      expectCleanError(reply, 400, "invalid_request");
      expect(reply.body.message).toContain("U+0000");
    }
    // Where the string is stored as canonical JSON text, U+0000 is just a character.
    const decided = await call("POST", "/v1/protect", { json: { action: "document.read", resource: NUL }, headers: apiKey(user.apiKey) });
    expect(decided.status).toBe(200);
    expect(decided.body.payload.input.resource).toBe(NUL);
  });

  test("in ids, in paths or bodies: an id that names nothing is 404 not_found, whatever its shape", async () => {
    const user = await signup();
    remember(user.token);
    remember(user.apiKey);
    for (const path of ["/customer/keys/%00/rotate", "/customer/keys/%00/revoke", "/customer/upgrades/x%00/cancel", "/customer/receipts/%00", "/customer/receipts/rcpt_%00/proof"]) {
      const method = path.startsWith("/customer/receipts") ? "GET" : "POST";
      expectCleanError(await call(method, path, { headers: bearer(user.token) }), 404, "not_found");
    }
    expectCleanError(await call("POST", "/v1/execute", { json: { receipt_id: `rcpt_${NUL}` }, headers: apiKey(user.apiKey) }), 404, "not_found");
  });
});

describe("a lone UTF-16 surrogate in a JSON string: 400 invalid_request with its path, never 500", () => {
  const LONE = /\p{Cs}/u;
  const json = { "content-type": "application/json" };

  test("as a value, in an array, in a nested object or as a property name", async () => {
    const user = await signup();
    remember(user.token);
    const keyId = (await call("POST", "/customer/keys", { json: { label: "surrogates" }, headers: bearer(user.token) })).body.key_id;
    const cases: [string, string, string, string][] = [
      // JSON.stringify writes a JS string's lone surrogate as the escape: what a JS client sends.
      ["POST", "/customer/keys", JSON.stringify({ label: "\ud800" }), "body/label"],
      ["POST", "/customer/keys", '{"label":"a\\uDFFFb"}', "body/label"],
      ["PATCH", `/customer/keys/${keyId}`, JSON.stringify({ actions: ["payment.*", "x\udc00"] }), "body/actions/1"],
      ["PATCH", `/customer/keys/${keyId}`, JSON.stringify({ metadata: { team: "\udbff" } }), "body/metadata/team"],
      ["PATCH", `/customer/keys/${keyId}`, JSON.stringify({ metadata: { "a\ud800": "b" } }), "body/metadata/a\ufffd"],
      // Before validation: an unknown field with one is refused for the surrogate, not the field.
      ["POST", "/customer/keys", '{"label":"ok","\\ud800":1}', "body/\ufffd"],
    ];
    for (const [method, path, body, where] of cases) {
      const reply = await call(method, path, { body, headers: { ...bearer(user.token), ...json } });
      expectCleanError(reply, 400, "invalid_request");
      expect(reply.body.message).toStartWith(`${where}: `);
      expect(reply.body.message).toContain("surrogate");
      // The answer never echoes a lone surrogate back.
      expect(LONE.test(reply.text)).toBe(false);
    }
    // A pair is one character: it is text like any other.
    const emoji = await call("POST", "/customer/keys", { body: '{"label":"\\ud83d\\ude00"}', headers: { ...bearer(user.token), ...json } });
    expect(emoji.status).toBe(201);
    expect(emoji.body.label).toBe("\u{1f600}");
    // Nothing of the refused requests was stored.
    const listed = await call("GET", "/customer/keys", { headers: bearer(user.token) });
    const labels = listed.body.keys.map((k: { label: string }) => k.label);
    expect(labels).toHaveLength(3); // with the first key, made at signup
    expect(labels).toContain("\u{1f600}");
    expect(labels).toContain("surrogates");
  });

  test("a raw one in a body's text arrives as U+FFFD; WTF-8 bytes, a query string or a path parameter cannot carry one", async () => {
    const user = await signup();
    remember(user.token);
    // A JS string written as the body text: the client's UTF-8 encoder sends U+FFFD in its place.
    const raw = await call("POST", "/customer/keys", { body: '{"label":"\ud800"}', headers: { ...bearer(user.token), ...json } });
    expect(raw.status).toBe(201);
    expect(raw.body.label).toBe("\ufffd");
    // Its bytes in WTF-8 (ED A0 80) are not UTF-8.
    const bytes = new Uint8Array([...new TextEncoder().encode('{"label":"'), 0xed, 0xa0, 0x80, ...new TextEncoder().encode('"}')]);
    expectCleanError(await call("POST", "/customer/keys", { body: bytes, headers: { ...bearer(user.token), ...json } }), 400, "invalid_json");
    // Percent-decoding refuses those bytes too: 400, 404, never a lone surrogate in a query.
    expectCleanError(await call("GET", "/customer/audit?event=%ED%A0%80", { headers: bearer(user.token) }), 400, "invalid_request");
    expectCleanError(await call("GET", "/customer/keys?cursor=%ED%A0%80", { headers: bearer(user.token) }), 400, "invalid_request");
    expectCleanError(await call("GET", "/customer/receipts/rcpt_%ED%A0%80", { headers: bearer(user.token) }), 400, "invalid_request");
  });
});

describe(`bodies nested deeper than ${MAX_JSON_DEPTH} levels: 400 invalid_request, at once`, () => {
  test("arrays and objects, on routes with and without a free-form field", async () => {
    const user = await signup();
    remember(user.apiKey);
    const deep = (n: number, open: string, close: string) => `{"receipt":${open.repeat(n)}1${close.repeat(n)}}`;
    for (const path of ["/v1/verify", "/v1/protect", "/auth/login", "/auth/signup"]) {
      for (const body of [deep(30_000, "[", "]"), deep(5_000, '{"a":', "}"), deep(MAX_JSON_DEPTH, "[", "]")]) {
        const started = performance.now();
        const reply = await call("POST", path, { body, headers: { "content-type": "application/json", ...apiKey(user.apiKey) } });
        // Before the fix: 7 s of pretty-printing in the validator, then 500 out of memory.
        expect(performance.now() - started).toBeLessThan(1000);
        expectCleanError(reply, 400, "invalid_request");
      }
    }
    // Up to the limit a body is read (and judged by the route's schema as usual).
    const ok = await call("POST", "/v1/verify", { body: `{"receipt":${"[".repeat(MAX_JSON_DEPTH - 1)}${"]".repeat(MAX_JSON_DEPTH - 1)}}`, headers: { "content-type": "application/json", ...apiKey(user.apiKey) } });
    expect(ok.status).toBe(200);
    // Brackets inside strings are text, not nesting.
    const text = await call("POST", "/v1/verify", { json: { receipt: "[".repeat(10_000) }, headers: apiKey(user.apiKey) });
    expect(text.status).toBe(200);
  });
});

describe("failures inside the service", () => {
  async function serviceFailingWith(err: Error) {
    const { db } = await testService();
    const fail = async () => {
      throw err;
    };
    const lines: string[] = [];
    const service = await createService(testConfig(), { db, log: createLogger("info", (l) => lines.push(l)) });
    // Started on the working database; from now on the routes' queries fail.
    service.deps.db = { ...db, query: fail, one: fail } as Db;
    return { service, lines };
  }

  test("a database error with SQL and a constraint in its text: 500 internal_error, nothing of it shown", async () => {
    const sqlError = new DbError("23514", "tenants_secret_check", 'new row for relation "tenants" violates check constraint; SELECT password_hash FROM tenants WHERE email = $1', "accounts/find_for_login");
    const { service, lines } = await serviceFailingWith(sqlError);
    const reply = await call("POST", "/auth/login", { json: { email: "a@example.com", password: "whatever1" }, service });
    expectCleanError(reply, 500, "internal_error");
    expect(lines.some((l) => l.includes(reply.body.request_id) && l.includes("unexpected_error"))).toBe(true);
  });

  test("an unreachable database: 503 unavailable with Retry-After, nothing of the driver shown", async () => {
    const { service } = await serviceFailingWith(new DbUnavailableError("connect ECONNREFUSED 10.0.0.5:5432 (postgres)"));
    for (const reply of [await call("GET", "/health", { service }), await call("POST", "/auth/login", { json: { email: "a@example.com", password: "whatever1" }, service })]) {
      expectCleanError(reply, 503, "unavailable");
      expect(reply.text).not.toContain("10.0.0.5");
      expect(Number(reply.headers.get("retry-after"))).toBeGreaterThan(0);
    }
  });
});

test("no password, token, JWT or key used here reaches a log line", () => {
  expectNoSecretIn(logLines);
});
