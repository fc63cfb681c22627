// Property-based fuzzing (fast-check) of every route, in-process through `service.handle`:
// wrong types, missing and extra fields, huge and deeply nested values, invalid UTF-8, lone UTF-16
// surrogates, control characters, SQL and path-traversal strings, wrong methods, content types and
// credentials.
// Whatever arrives: no 5xx, every error body is the documented one (docs/api.md, Error codes), the service stays up and its
// memory stays bounded. Seeded (FUZZ_SEED), so a failure reproduces; FUZZ_RUNS scales the count.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { Service } from "../../src/app/service.ts";
import { documentPath } from "../../src/app/openapi.ts";
import { requestState } from "../../src/http/request-state.ts";
import { checkerOf } from "../helpers/openapi.ts";
import { apiKey, bearer, protect, setPlan } from "../helpers/customer.ts";
import { BASE, call, logLines, signup, testService } from "../helpers/service.ts";
import { errorProblem, expectNoSecretIn, remember, startWire, type Wire } from "./helpers.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_707);
/** Generated requests in all, shared out over the routes. */
const TOTAL = Number(process.env.FUZZ_RUNS ?? 10_400);
/** Some generated requests cannot be built at all (a client could not send them); the rest must reach this many. */
const MIN_SENT = Math.floor(TOTAL * 0.97);

// ---- what the service offers --------------------------------------------------------------

type Auth = "none" | "jwt" | "key" | "either";
interface Route {
  method: string;
  /** `:name` marks a path parameter; a trailing `*` one that may span segments. */
  path: string;
  auth: Auth;
  /** Field names of a JSON body, each with values of the right shape. */
  fields?: Record<string, fc.Arbitrary<unknown>>;
  /** Query parameters the route reads. */
  query?: string[];
}

const text = (max = 40) => fc.string({ maxLength: max });
// Sometimes the same address again (409 email_taken), sometimes an acceptable password.
const email = () => fc.oneof(fc.emailAddress(), fc.constantFrom("fuzz.same@example.com", "FUZZ.same@example.com "));
const password = () => fc.oneof(text(300), fc.constantFrom("a fuzzing passphrase", "password123"));
// AuthZEN entities: right-shaped with odd names, properties and values, or any JSON at all.
const authzenFields = () => {
  const properties = fc.dictionary(fc.oneof(fc.stringMatching(/^[a-z_.]{1,8}$/), text(70)), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 40 });
  const entity = fc.oneof(fc.record({ type: text(10), id: text(600), properties }, { requiredKeys: ["type", "id"] }), fc.jsonValue({ maxDepth: 2 }));
  const actionProperties = fc.oneof(properties, fc.record({ amount: fc.oneof(fc.integer(), fc.double(), text()), currency: fc.constantFrom("USD", "usd", null) }, { requiredKeys: [] }));
  return {
    subject: entity,
    resource: entity,
    action: fc.oneof(fc.record({ name: fc.constantFrom("can_read", "payment.send", "read all", ""), properties: actionProperties }, { requiredKeys: ["name"] }), fc.jsonValue({ maxDepth: 2 })),
    context: fc.oneof(properties, fc.jsonValue({ maxDepth: 2 })),
  };
};
// Webhook targets: public and private address literals, localhost, other schemes, nonsense, too long.
const webhookUrl = () =>
  fc.oneof(
    fc.constantFrom("https://93.184.215.14/in", "https://127.0.0.1/in", "https://[::1]:8443/in", "https://169.254.169.254/latest", "https://10.0.0.1/",
      "https://[::ffff:10.0.0.1]/", "https://0x7f.1/", "https://localhost/in", "http://93.184.215.14/in", "file:///etc/passwd", "https://u:p@93.184.215.14/",
      "gopher://127.0.0.1:6379/", "https://93.184.215.14:0/", "https://93.184.215.14:99999/", `https://93.184.215.14/${"a".repeat(2000)}`),
    fc.webUrl().map((u) => u.replace(/^https?:\/\/[^/?#]*/, "https://93.184.215.14")),
    text(100),
  );
const ROUTES: Route[] = [
  { method: "GET", path: "/health", auth: "none" },
  { method: "GET", path: "/livez", auth: "none" },
  { method: "GET", path: "/readyz", auth: "none" },
  { method: "GET", path: "/openapi.json", auth: "none" },
  { method: "GET", path: "/docs", auth: "none" },
  { method: "GET", path: "/.well-known/jwks.json", auth: "none" },
  { method: "GET", path: "/features/catalog", auth: "none" },
  { method: "GET", path: "/v1/presets", auth: "none" },
  { method: "POST", path: "/auth/signup", auth: "none", fields: { email: email(), password: password() } },
  { method: "POST", path: "/auth/login", auth: "none", fields: { email: email(), password: password() } },
  { method: "POST", path: "/auth/mfa/verify", auth: "none", fields: { mfa_token: text(600), code: fc.oneof(fc.stringMatching(/^\d{6}$/), text(80)) } },
  { method: "POST", path: "/auth/verify-email/request", auth: "jwt", fields: {} },
  { method: "POST", path: "/auth/verify-email/confirm", auth: "none", fields: { token: fc.base64String({ maxLength: 60 }) } },
  { method: "GET", path: "/auth/verify-email/status", auth: "jwt" },
  { method: "POST", path: "/auth/reset-password/request", auth: "none", fields: { email: fc.emailAddress() } },
  { method: "POST", path: "/auth/reset-password/validate", auth: "none", fields: { token: fc.base64String({ maxLength: 60 }) } },
  { method: "POST", path: "/auth/reset-password/confirm", auth: "none", fields: { token: fc.base64String({ maxLength: 60 }), password: password() } },
  {
    method: "POST",
    path: "/v1/simulate",
    auth: "either",
    fields: {
      preset: fc.constantFrom("small_payment", "large_payment", "read_document", "nope"),
      input: fc.jsonValue({ maxDepth: 3 }),
      policy_version: fc.oneof(fc.integer({ min: -1, max: 5 }), fc.constant(2_147_483_648)),
      document: fc.jsonValue({ maxDepth: 5 }),
    },
  },
  { method: "POST", path: "/api/simulate", auth: "either", fields: { preset: fc.constantFrom("small_payment", "read_document", "__proto__", "constructor") } },
  {
    method: "POST",
    path: "/v1/protect",
    auth: "key",
    fields: {
      action: fc.constantFrom("payment.send", "document.read", "a", "x:y/z-1"),
      resource: text(),
      amount: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.double({ min: 0, max: 1e15, noNaN: true })),
      currency: fc.constantFrom("USD", "EUR", "usd", "US"),
      context: fc.dictionary(fc.stringMatching(/^[A-Za-z0-9_.-]{1,8}$/), fc.oneof(text(), fc.integer(), fc.boolean()), { maxKeys: 4 }),
    },
  },
  { method: "POST", path: "/v1/execute", auth: "key", fields: { receipt_id: fc.constantFrom("rcpt_" + "A".repeat(22), "rcpt_x", "") } },
  { method: "POST", path: "/v1/verify", auth: "key", fields: { receipt: fc.jsonValue({ maxDepth: 4 }) } },
  { method: "GET", path: "/v1/approvals/:approval_id", auth: "key", query: ["wait"] },
  { method: "POST", path: "/v1/approvals/:approval_id/cancel", auth: "key" },
  { method: "GET", path: "/.well-known/authzen-configuration", auth: "none" },
  { method: "POST", path: "/access/v1/evaluation", auth: "key", fields: authzenFields() },
  {
    method: "POST",
    path: "/access/v1/evaluations",
    auth: "key",
    fields: {
      ...authzenFields(),
      evaluations: fc.array(fc.record(authzenFields(), { requiredKeys: [] }), { maxLength: 4 }),
      options: fc.record({ evaluations_semantic: fc.constantFrom("execute_all", "deny_on_first_deny", "permit_on_first_permit", "all"), other: text() }, { requiredKeys: [] }),
    },
  },
  // AuthZEN Search: the same entities, and a page of any shape.
  ...(["subject", "resource", "action"] as const).map((kind): Route => ({
    method: "POST",
    path: `/access/v1/search/${kind}`,
    auth: "key",
    fields: {
      ...authzenFields(),
      page: fc.oneof(fc.record({ limit: fc.oneof(fc.integer({ min: -2, max: 2000 }), text()), token: fc.oneof(text(100), fc.base64String({ maxLength: 200 })) }, { requiredKeys: [] }), fc.jsonValue({ maxDepth: 2 })),
    },
  })),
  { method: "GET", path: "/customer/receipts", auth: "jwt", query: ["limit", "cursor"] },
  { method: "GET", path: "/customer/receipts/checkpoint", auth: "jwt" },
  { method: "GET", path: "/customer/receipts/consistency", auth: "jwt", query: ["from", "to"] },
  { method: "GET", path: "/customer/receipts/export", auth: "jwt" },
  { method: "GET", path: "/customer/receipts/:receipt_id", auth: "jwt" },
  { method: "GET", path: "/customer/receipts/:receipt_id/proof", auth: "jwt", query: ["tree_size"] },
  { method: "GET", path: "/customer/log/tile/*", auth: "jwt" },
  { method: "POST", path: "/customer/keys", auth: "jwt", fields: { label: text(120) } },
  { method: "GET", path: "/customer/keys", auth: "jwt" },
  {
    method: "PATCH",
    path: "/customer/keys/:key_id",
    auth: "jwt",
    fields: {
      label: text(120),
      expires_at: fc.oneof(fc.date({ min: new Date(0), max: new Date(8.64e15) }).map((d) => (Number.isNaN(d.getTime()) ? "x" : d.toISOString())), text(40), fc.constant(null)),
      enabled: fc.oneof(fc.boolean(), text(5)),
      actions: fc.oneof(fc.array(fc.constantFrom("payment.*", "document.read", "*", "a*b", "", "x".repeat(201)), { maxLength: 4 }), fc.constant(null)),
      limits: fc.oneof(fc.record({ protect_per_day: fc.integer({ min: -1, max: 2_000_000_000 }), per_second: fc.integer({ min: -1, max: 20_000 }), burst: fc.integer({ min: -1, max: 20_000 }) }, { requiredKeys: [] }), fc.constant(null)),
      allowed_ips: fc.oneof(fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom("10.0.0.0/8", "10.0.0.1/8", "::/0", "1.2.3.4/33", "x")), { maxLength: 4 }), fc.constant(null)),
      metadata: fc.oneof(fc.dictionary(text(45), fc.oneof(text(300), fc.integer()), { maxKeys: 18 }), fc.constant(null)),
    },
  },
  { method: "POST", path: "/customer/keys/:key_id/rotate", auth: "jwt", fields: { overlap: fc.oneof(fc.integer({ min: -5, max: 100_000 }), text(5)) } },
  { method: "POST", path: "/customer/keys/:key_id/revoke", auth: "jwt" },
  { method: "GET", path: "/customer/policy", auth: "jwt" },
  { method: "PUT", path: "/customer/policy", auth: "jwt", fields: { document: fc.jsonValue({ maxDepth: 5 }) } },
  { method: "GET", path: "/customer/policy/versions", auth: "jwt", query: ["limit", "cursor"] },
  { method: "GET", path: "/customer/policy/versions/:version", auth: "jwt" },
  { method: "POST", path: "/customer/policy/versions/:version/restore", auth: "jwt" },
  { method: "POST", path: "/customer/policy/test", auth: "jwt", fields: { document: fc.jsonValue({ maxDepth: 5 }), cases: fc.jsonValue({ maxDepth: 4 }) } },
  { method: "GET", path: "/customer/policy/tests", auth: "jwt" },
  { method: "PUT", path: "/customer/policy/tests", auth: "jwt", fields: { cases: fc.jsonValue({ maxDepth: 4 }) } },
  { method: "POST", path: "/customer/policy/impact", auth: "jwt", fields: { document: fc.jsonValue({ maxDepth: 5 }), limit: fc.integer({ min: -1, max: 10_001 }) } },
  { method: "POST", path: "/customer/upgrades/request", auth: "jwt", fields: { requested_plan: fc.constantFrom("pro", "enterprise", "free", "PRO", "gold"), reason: text(2100) } },
  { method: "GET", path: "/customer/upgrades", auth: "jwt" },
  { method: "POST", path: "/customer/upgrades/:id/cancel", auth: "jwt" },
  { method: "GET", path: "/customer/dashboard", auth: "jwt" },
  // 404 here (the shared service keeps DATA_DIR in memory): test/mail/dev-mail.test.ts has the rest.
  { method: "GET", path: "/dev/mailbox", auth: "jwt" },
  { method: "GET", path: "/customer/account", auth: "jwt" },
  { method: "POST", path: "/customer/account/password", auth: "jwt", fields: { current_password: text(), new_password: password() } },
  { method: "POST", path: "/customer/account/mfa/enroll", auth: "jwt", fields: {} },
  { method: "POST", path: "/customer/account/mfa/confirm", auth: "jwt", fields: { code: fc.oneof(fc.stringMatching(/^\d{6}$/), text(80)) } },
  { method: "POST", path: "/customer/account/mfa/disable", auth: "jwt", fields: { password: password(), code: fc.oneof(fc.stringMatching(/^\d{6}$/), text(80)) } },
  { method: "POST", path: "/customer/account/mfa/recovery-codes", auth: "jwt", fields: { password: password(), code: fc.oneof(fc.stringMatching(/^\d{6}$/), text(80)) } },
  { method: "GET", path: "/auth/tenants", auth: "jwt" },
  { method: "POST", path: "/auth/switch", auth: "jwt", fields: { tenant_id: fc.oneof(fc.constantFrom("cust_" + "A".repeat(22)), text()) } },
  { method: "POST", path: "/auth/invitations/preview", auth: "none", fields: { token: fc.base64String({ maxLength: 60 }) } },
  { method: "POST", path: "/auth/invitations/accept", auth: "none", fields: { token: fc.base64String({ maxLength: 60 }), password: password(), code: fc.oneof(fc.stringMatching(/^\d{6}$/), text(80)) } },
  { method: "GET", path: "/customer/members", auth: "jwt" },
  { method: "POST", path: "/customer/members/invitations", auth: "jwt", fields: { email: email(), role: fc.constantFrom("owner", "admin", "developer", "approver", "viewer", "root", "") } },
  { method: "GET", path: "/customer/members/invitations", auth: "jwt" },
  { method: "POST", path: "/customer/members/invitations/:invitation_id/revoke", auth: "jwt" },
  { method: "PATCH", path: "/customer/members/:member_id", auth: "jwt", fields: { role: fc.constantFrom("owner", "admin", "developer", "approver", "viewer", "root", "") } },
  { method: "DELETE", path: "/customer/members/:member_id", auth: "jwt", query: ["revoke_keys"] },
  { method: "GET", path: "/customer/settings", auth: "jwt" },
  { method: "GET", path: "/customer/audit", auth: "jwt", query: ["limit", "cursor", "event"] },
  { method: "GET", path: "/customer/usage", auth: "jwt" },
  { method: "GET", path: "/customer/approvals", auth: "jwt", query: ["status", "limit", "cursor"] },
  { method: "GET", path: "/customer/approvals/:approval_id", auth: "jwt" },
  { method: "POST", path: "/customer/approvals/:approval_id/votes", auth: "jwt", fields: { vote: fc.constantFrom("approve", "deny", "maybe", ""), action_hash: text(), comment: text() } },
  { method: "GET", path: "/customer/approvals/:approval_id/bundle", auth: "jwt" },
  { method: "POST", path: "/customer/approvals/:approval_id/cancel", auth: "jwt" },
  // Address literals and localhost only: a name would wait on DNS.
  { method: "POST", path: "/customer/webhooks", auth: "jwt", fields: { url: webhookUrl(), events: fc.oneof(fc.array(fc.constantFrom("*", "approval.requested", "approval.denied", "key.created", "", "*.*"), { maxLength: 22 }), fc.jsonValue({ maxDepth: 2 })), description: text(300) } },
  { method: "GET", path: "/customer/webhooks", auth: "jwt" },
  { method: "POST", path: "/customer/webhooks/:id/rotate-secret", auth: "jwt" },
  { method: "POST", path: "/customer/webhooks/:id/test", auth: "jwt" },
  { method: "GET", path: "/customer/webhooks/:id/deliveries", auth: "jwt", query: ["limit", "cursor"] },
  { method: "DELETE", path: "/customer/webhooks/:id", auth: "jwt" },
  {
    method: "PUT",
    path: "/customer/entities",
    auth: "jwt",
    fields: {
      entities: fc.oneof(
        fc.array(fc.record({ type: text(), id: text(), attributes: fc.oneof(fc.dictionary(text(70), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 70 }), fc.jsonValue({ maxDepth: 1 })), parents: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: ["type", "id", "attributes"] }), { maxLength: 5 }),
        fc.jsonValue({ maxDepth: 2 }),
      ),
    },
  },
  { method: "GET", path: "/customer/entities", auth: "jwt", query: ["type", "limit", "cursor"] },
  { method: "GET", path: "/customer/entities/:type/:id", auth: "jwt" },
  { method: "DELETE", path: "/customer/entities/:type/:id", auth: "jwt" },
  // OAuth for agents (docs/api.md): the authorization server's routes, hostile parameters and bodies.
  { method: "GET", path: "/.well-known/oauth-authorization-server", auth: "none" },
  { method: "POST", path: "/oauth/register", auth: "none", fields: { redirect_uris: fc.oneof(fc.array(fc.oneof(webhookUrl(), fc.constantFrom("http://127.0.0.1:9/cb", "http://localhost/cb#frag", "myapp://cb")), { maxLength: 12 }), fc.jsonValue({ maxDepth: 2 })), client_name: text(250), token_endpoint_auth_method: fc.constantFrom("none", "client_secret_basic", ""), grant_types: fc.array(fc.constantFrom("authorization_code", "refresh_token", "implicit"), { maxLength: 3 }), scope: text() } },
  { method: "GET", path: "/oauth/authorize", auth: "none", query: ["response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "scope", "resource", "prompt"] },
  { method: "POST", path: "/oauth/token", auth: "none", fields: { grant_type: fc.constantFrom("authorization_code", "refresh_token", "password", ""), code: text(120), code_verifier: text(130), redirect_uri: webhookUrl(), client_id: text(60), refresh_token: fc.oneof(text(120), fc.constant("wrt_x_y")), resource: text(200) } },
  { method: "POST", path: "/oauth/revoke", auth: "none", fields: { token: fc.oneof(text(120), fc.constantFrom("wat_x", "wrt_x")), token_type_hint: fc.constantFrom("access_token", "refresh_token", "x"), client_id: text(60) } },
  { method: "GET", path: "/oauth/consent", auth: "jwt", query: ["response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "scope", "resource"] },
  { method: "POST", path: "/oauth/consent", auth: "jwt", fields: { client_id: text(60), redirect_uri: webhookUrl(), code_challenge: text(60), code_challenge_method: fc.constantFrom("S256", "plain"), state: text(), resource: text(200), approve: fc.oneof(fc.boolean(), text()) } },
  { method: "GET", path: "/customer/oauth/grants", auth: "jwt" },
  { method: "DELETE", path: "/customer/oauth/grants/:grant_id", auth: "jwt" },
  // Remote MCP gateways: the registry, each member's secret, the endpoint and its metadata.
  { method: "POST", path: "/customer/mcp/gateways", auth: "jwt", fields: { name: fc.oneof(fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,8}$/), text(80)), upstream_url: webhookUrl(), upstream_auth: fc.constantFrom("none", "shared", "per_member", "other"), secret: text(100) } },
  { method: "GET", path: "/customer/mcp/gateways", auth: "jwt" },
  { method: "GET", path: "/customer/mcp/gateways/:id", auth: "jwt" },
  { method: "PATCH", path: "/customer/mcp/gateways/:id", auth: "jwt", fields: { enabled: fc.oneof(fc.boolean(), text()) } },
  { method: "PUT", path: "/customer/mcp/gateways/:id/secret", auth: "jwt", fields: { secret: text(5000) } },
  { method: "DELETE", path: "/customer/mcp/gateways/:id/secret", auth: "jwt" },
  { method: "DELETE", path: "/customer/mcp/gateways/:id", auth: "jwt" },
  { method: "POST", path: "/mcp/:gateway_id", auth: "none", fields: { jsonrpc: fc.constantFrom("2.0", "1.0"), id: fc.oneof(fc.integer(), text()), method: fc.constantFrom("initialize", "tools/list", "tools/call", "x"), params: fc.jsonValue({ maxDepth: 3 }) } },
  { method: "GET", path: "/mcp/:gateway_id", auth: "none" },
  { method: "DELETE", path: "/mcp/:gateway_id", auth: "none" },
  { method: "GET", path: "/.well-known/oauth-protected-resource/mcp/:gateway_id", auth: "none" },
  // After every other session route: a tenant that comes to require a second factor answers them 403.
  { method: "PUT", path: "/customer/settings", auth: "jwt", fields: { require_mfa: fc.boolean(), allow_self_approval: fc.boolean(), revoke_keys_on_member_removal: fc.boolean() } },
  // Last of the API routes: signing out ends the fuzzer's own sessions for the routes after it.
  { method: "POST", path: "/auth/logout", auth: "jwt", fields: { all: fc.oneof(fc.boolean(), text()) } },
  // The web console's pages and assets (not in the OpenAPI document: not API).
  { method: "GET", path: "/console", auth: "none" },
  { method: "GET", path: "/console/:page", auth: "none" },
  { method: "GET", path: "/console/assets/:file", auth: "none" },
];

// ---- hostile values -------------------------------------------------------------------------

const NASTY = [
  "' OR '1'='1",
  "'; DROP TABLE tenants; --",
  "\"; SELECT pg_sleep(5); --",
  "1; UPDATE receipts SET decision = 'ALLOWED'",
  "$1",
  "\\",
  "%s%s%s%n",
  "${jndi:ldap://x}",
  "../../../../etc/passwd",
  "..%2f..%2f..%2fetc%2fpasswd",
  "..\\..\\windows\\win.ini",
  "/dev/null",
  "\u0000",
  "a\u0000b",
  "\u0001\u0002\u0007\u001b[31m",
  "\r\nX-Injected: 1",
  "\u2028\u2029",
  "\ud800",
  "\udfff\ud800",
  "\u202e\u200b\ufeff",
  "🔒🐉".repeat(50),
  "__proto__",
  "constructor",
  "prototype",
  "1e309",
  "-0",
  "NaN",
  "null",
  "true",
  "<script>alert(1)</script>",
  "{\"$gt\": \"\"}",
  "warden_live_" + "A".repeat(32) + "_AAAAAA",
  "cust_" + "A".repeat(22),
  "x".repeat(1000),
];
const nasty = fc.constantFrom(...NASTY);
const anyString = fc.oneof(nasty, fc.string({ maxLength: 50 }), fc.string({ unit: "binary", maxLength: 30 }), fc.string({ unit: "grapheme", maxLength: 20 }));

/** A JSON value, kept as a tree whose objects are key/value lists, so keys may repeat or be `__proto__`. */
type Tree = null | boolean | number | string | { list: Tree[] } | { pairs: [string, Tree][] };
const leaf: fc.Arbitrary<Tree> = fc.oneof(
  anyString,
  fc.integer(),
  fc.double(), // NaN and Infinity become null in JSON, -0 becomes 0
  fc.constantFrom(0, -1, 2 ** 53 + 1, 1e308, -1e308, 1e-320),
  fc.boolean(),
  fc.constant(null),
);
const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("node"), { maxLength: 4 }).map((list) => ({ list })),
    fc.array(fc.tuple(fc.oneof(anyString, fc.constantFrom("__proto__", "constructor")), tie("node")), { maxLength: 4 }).map((pairs) => ({ pairs })),
  ),
})).node;

function toJson(t: Tree): string {
  if (t === null || typeof t !== "object") return JSON.stringify(t) ?? "null";
  if ("list" in t) return `[${t.list.map(toJson).join(",")}]`;
  return `{${t.pairs.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(",")}}`;
}

/** An object body: each known field right, wrong or missing, plus maybe extra fields. */
function fieldsBody(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string> {
  const names = Object.keys(fields);
  const value = (name: string) => fc.oneof({ weight: 4, arbitrary: fields[name].map((v) => JSON.stringify(v) ?? "null") }, { weight: 1, arbitrary: tree.map(toJson) });
  const extras = fc.array(fc.tuple(fc.oneof(anyString, fc.constantFrom("admin", "tenant_id", "__proto__", names[0] ?? "x")), tree.map(toJson)), { minLength: 1, maxLength: 2 });
  return fc
    .tuple(
      fc.tuple(...names.map((n) => fc.option(value(n), { freq: 8, nil: undefined }))),
      fc.oneof({ weight: 3, arbitrary: fc.constant<[string, string][]>([]) }, { weight: 1, arbitrary: extras }),
    )
    .map(([known, extra]) => {
      const pairs = names.flatMap((n, i) => (known[i] === undefined ? [] : [`${JSON.stringify(n)}:${known[i]}`]));
      pairs.push(...extra.map(([k, v]) => `${JSON.stringify(k)}:${v}`));
      return `{${pairs.join(",")}}`;
    });
}

const nested = fc.tuple(fc.integer({ min: 20, max: 3000 }), fc.constantFrom("[", "{\"a\":")).map(([depth, open]) => open.repeat(depth) + "1" + (open === "[" ? "]" : "}").repeat(depth));
const huge = fc.tuple(fc.integer({ min: 60_000, max: 70_000 }), fc.constantFrom("x", "é", "\\u0000", "🔒")).map(([n, c]) => `{"email":"${c.repeat(Math.ceil(n / c.length))}","password":"x"}`);

/** `lone`: the text holds a lone surrogate, which no route may accept. */
type Body = { kind: "none" } | { kind: "text"; text: string; lone?: true } | { kind: "bytes"; bytes: Uint8Array };

/** A string with at least one lone surrogate (a high one with no low one after it, or a low one alone). */
const loneSurrogate = fc
  .tuple(text(8), fc.integer({ min: 0xd800, max: 0xdfff }), fc.constantFrom("", "x", "\ud800"), text(8))
  .map(([before, unit, after, tail]) => before + String.fromCharCode(unit) + after + tail)
  .filter((s) => /\p{Cs}/u.test(s));

/**
 * A body whose fields are right, wrong or missing as fieldsBody makes them, with a lone surrogate
 * (written as JSON.stringify writes one: `\ud800`) as one field's value, inside an array or object
 * there, or as a property name.
 */
function loneSurrogateBody(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string> {
  const name = fc.constantFrom(...Object.keys(fields), "name");
  const value = fc.oneof(loneSurrogate, loneSurrogate.map((s) => [1, s]), loneSurrogate.map((s) => ({ a: { b: s } })));
  const placed = fc.oneof(
    fc.tuple(name, value).map(([n, v]) => `${JSON.stringify(n)}:${JSON.stringify(v)}`),
    fc.tuple(loneSurrogate, tree.map(toJson)).map(([k, v]) => `${JSON.stringify(k)}:${v}`),
  );
  // Last, since JSON.parse keeps the last of a repeated name: the surrogate is what arrives.
  return fc.tuple(fieldsBody(fields), placed).map(([body, pair]) => (body === "{}" ? `{${pair}}` : `${body.slice(0, -1)},${pair}}`));
}
function bodyFor(route: Route): fc.Arbitrary<Body> {
  const asText = (a: fc.Arbitrary<string>) => a.map((text): Body => ({ kind: "text", text }));
  return fc.oneof(
    { weight: route.fields ? 6 : 1, arbitrary: asText(fieldsBody(route.fields ?? {})) },
    { weight: 2, arbitrary: asText(tree.map(toJson)) },
    { weight: 1, arbitrary: fc.constant<Body>({ kind: "none" }) },
    { weight: 1, arbitrary: asText(nested) },
    { weight: 1, arbitrary: loneSurrogateBody(route.fields ?? {}).map((text): Body => ({ kind: "text", text, lone: true })) },
    { weight: 1, arbitrary: asText(huge) },
    { weight: 1, arbitrary: asText(fc.oneof(anyString, fc.constantFrom("{", "{\"a\":}", "[1,]", "{'a':1}", "undefined", "", " ", "\u0000"))) },
    // Raw bytes: invalid UTF-8, overlong forms, a BOM, NULs.
    { weight: 1, arbitrary: fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.constantFrom(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]), new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), new Uint8Array([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d]))).map((bytes): Body => ({ kind: "bytes", bytes })) },
  );
}

/** Percent-encodes every byte of the UTF-8 form but the unreserved ones (lone surrogates too). */
function pct(s: string): string {
  return Array.from(new TextEncoder().encode(s), (b) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`)).join("");
}

// ---- the tenants the requests act as ------------------------------------------------------

interface Fixture {
  jwts: string[];
  keys: string[];
  /** Path parameter values that name real resources (own and other tenants'). */
  ids: Record<string, string[]>;
}
let fx: Fixture;

const CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/json;charset=latin1", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "application/merge-patch+json", "", "*/*"];
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

interface Generated {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Body;
}

function requestFor(route: Route): fc.Arbitrary<Generated> {
  const param = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...Object.values(fx.ids).flat()) },
    { weight: 3, arbitrary: anyString.map(pct) },
    { weight: 1, arbitrary: fc.constantFrom("", "%", "%zz", "%E0%A4%A", "..", "%2e%2e", "..%2F..%2F", "%00", "a/b", "%C0%AF") },
  );
  const queryPair = fc.tuple(fc.oneof(fc.constantFrom(...(route.query ?? ["x"]), "api_key", "__proto__"), anyString), fc.oneof(anyString, fc.constantFrom("1", "0", "-1", "1e3", "99999999999999999999", "1.5", "", "NaN")));
  const headerValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 });
  // Mostly the credential the route wants, so that requests get past authentication.
  const right =
    route.auth === "jwt" ? fc.constantFrom(...fx.jwts).map((t) => bearer(t))
    : route.auth === "none" ? fc.constant<Record<string, string>>({})
    : fc.constantFrom(...fx.keys).map((k) => apiKey(k));
  const credential = fc.oneof(
    { weight: 12, arbitrary: right },
    fc.constant<Record<string, string>>({}),
    fc.constantFrom(...fx.jwts).map((t) => bearer(t)),
    fc.constantFrom(...fx.keys).map((k) => apiKey(k)),
    fc.constantFrom(...fx.jwts).map((t) => apiKey(t)),
    fc.constantFrom(...fx.keys).map((k) => bearer(k)),
    fc.oneof(headerValue, fc.constantFrom(...NASTY.filter((n) => /^[\x20-\x7e]+$/.test(n)))).map((s) => ({ authorization: `Bearer ${s}` })),
    fc.constantFrom<Record<string, string>>({ authorization: "Basic Zm9vOmJhcg==" }, { authorization: "Bearer" }, { "x-api-key": "" }, { "x-api-key": "warden_live_x" }),
  );
  return fc
    .record({
      method: fc.oneof({ weight: 5, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
      params: fc.array(param, { minLength: 3, maxLength: 3 }),
      query: fc.option(fc.array(queryPair, { maxLength: 3 }), { freq: 2 }),
      suffix: fc.constantFrom("", "", "", "/", "//", "/..", "/%2e", "?", "#x"),
      credential,
      contentType: fc.oneof(
        { weight: 10, arbitrary: fc.constantFrom<string | null>("application/json", "application/json; charset=utf-8") },
        { weight: 3, arbitrary: fc.constantFrom<string | null>(...CONTENT_TYPES) },
        { weight: 1, arbitrary: fc.constant(null) },
      ),
      requestId: fc.option(fc.oneof(headerValue, fc.constantFrom("ok-id", "x".repeat(129))), { freq: 3 }),
      idempotencyKey: fc.option(fc.oneof(headerValue, fc.constant("k".repeat(256))), { freq: 4 }),
      body: bodyFor(route),
    })
    .map((r) => {
      let i = 0;
      let path = route.path.replace(/:[a-z_]+|\*$/g, () => r.params[i++]) + r.suffix;
      if (r.query) path += (path.includes("?") ? "&" : "?") + r.query.map(([k, v]) => `${pct(k)}=${pct(v)}`).join("&");
      const headers: Record<string, string> = { ...r.credential };
      if (r.contentType !== null) headers["content-type"] = r.contentType;
      if (r.requestId !== null) headers["x-request-id"] = r.requestId;
      if (r.idempotencyKey !== null) headers["idempotency-key"] = r.idempotencyKey;
      return { method: r.method, path, headers, body: r.body };
    });
}

// ---- sending and judging ------------------------------------------------------------------

let service: Service;
let sent = 0;
const statuses = new Map<number, number>();

/** What goes on the wire as the body (GET requests carry none). */
function bodyOf(g: Generated): BodyInit | undefined {
  if (g.body.kind === "none" || g.method === "GET") return undefined;
  return g.body.kind === "text" ? g.body.text : (g.body.bytes as Uint8Array<ArrayBuffer>);
}

async function send(g: Generated): Promise<void> {
  const body = bodyOf(g);
  let request: Request;
  try {
    request = new Request(BASE + g.path, { method: g.method, headers: g.headers, body });
  } catch {
    return; // not even a valid HTTP request: no client could send it
  }
  const response = await service.handle(request);
  const text = await response.text();
  sent++;
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const describe = () => `${g.method} ${g.path.slice(0, 200)} ${JSON.stringify(g.headers).slice(0, 200)} body=${g.body.kind === "text" ? JSON.stringify(g.body.text.slice(0, 200)) : g.body.kind} -> ${response.status} ${text.slice(0, 300)}`;
  if (response.status >= 500) throw new Error(`a 5xx: ${describe()}`);
  // A body with a lone surrogate is never taken in, whatever else it holds.
  if (g.body.kind === "text" && g.body.lone && body !== undefined && response.status < 300) throw new Error(`a lone surrogate accepted: ${describe()}`);
  // Whatever was sent, the answer is one the OpenAPI document describes.
  const undocumented = checkerOf(service).problems(g.method, request.url, { status: response.status, contentType: response.headers.get("content-type"), body: parsed }, requestState(request).route);
  if (undocumented?.length) throw new Error(`not as documented (${undocumented.join("; ")}): ${describe()}`);
  if (!response.headers.get("x-request-id")) throw new Error(`no X-Request-ID: ${describe()}`);
  const sentId = g.headers["x-request-id"];
  if (sentId !== undefined && /^[\x21-\x7e]{1,128}$/.test(sentId) && response.headers.get("x-request-id") !== sentId) throw new Error(`X-Request-ID not echoed: ${describe()}`);
  if (response.status >= 400) {
    const problem = errorProblem({ status: response.status, headers: response.headers, body: parsed, text });
    if (problem) throw new Error(`${problem}: ${describe()}`);
  }
}

// ---- the suite ----------------------------------------------------------------------------

let memoryBefore: { heap: number; rss: number };

beforeAll(async () => {
  ({ service } = await testService());
  const [free, pro, other] = await Promise.all([signup(), signup(), signup()]);
  await setPlan(pro.tenantId, "pro");
  for (const t of [free, pro, other]) for (const s of [t.password, t.token, t.apiKey]) remember(s);
  const receipt = (await protect(free.apiKey)).body.receipt_id;
  const otherReceipt = (await protect(other.apiKey)).body.receipt_id;
  // Keys the fuzzer may rotate and revoke; the keys it authenticates with are not among them.
  const spare = await Promise.all([free, free, pro].map(async (t) => (await call("POST", "/customer/keys", { json: { label: "fuzz" }, headers: bearer(t.token) })).body));
  for (const k of spare) remember(k.secret);
  const upgrade = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "enterprise", reason: "fuzz" }, headers: bearer(free.token) })).body.request_id;
  const otherUpgrade = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "fuzz" }, headers: bearer(other.token) })).body.request_id;
  const invitation = (await call("POST", "/customer/members/invitations", { json: { email: "fuzz.invited@example.com", role: "developer" }, headers: bearer(free.token) })).body.invitation_id;
  const otherInvitation = (await call("POST", "/customer/members/invitations", { json: { email: "fuzz.invited@example.com", role: "viewer" }, headers: bearer(other.token) })).body.invitation_id;
  const webhooks = await Promise.all([free, other].map(async (t) => (await call("POST", "/customer/webhooks", { json: { url: "https://93.184.215.14/fuzz", events: ["*"] }, headers: bearer(t.token) })).body));
  for (const w of webhooks) remember(w.secret);
  await call("PUT", "/customer/entities", { json: { entities: [{ type: "user", id: "alice", attributes: { level: 1 } }] }, headers: bearer(pro.token) });
  fx = {
    jwts: [free.token, pro.token],
    keys: [free.apiKey, pro.apiKey],
    ids: { receipts: [receipt, otherReceipt], keys: spare.map((k) => k.key_id), upgrades: [upgrade, otherUpgrade], invitations: [invitation, otherInvitation],
      members: [free.memberId, pro.memberId, other.memberId], webhooks: webhooks.map((w) => w.webhook_id), entities: ["user", "alice"], tiles: ["0/000.p/1", "entries/000.p/1", "1/000", "0/x001/000"] },
  };
  // Warm up, then take the baseline.
  for (let i = 0; i < 50; i++) await call("GET", "/health");
  Bun.gc(true);
  const m = process.memoryUsage();
  memoryBefore = { heap: m.heapUsed, rss: m.rss };
}, 60_000);

describe(`${TOTAL} generated requests over ${ROUTES.length} routes (seed ${SEED})`, () => {
  test("the route list covers every route the OpenAPI document names", async () => {
    const doc = (await call("GET", "/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
    const fuzzed = new Set(ROUTES.map((r) => `${r.method} ${documentPath(r.path)}`));
    const missing = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)).filter((r) => !fuzzed.has(r));
    expect(missing).toEqual([]);
  });

  test("a lone surrogate in a JSON body is 400 invalid_request with its path on every POST, PUT, PATCH and DELETE of the OpenAPI document", async () => {
    const doc = (await call("GET", "/openapi.json")).body as { paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>> };
    const bodies: [string, string][] = [
      ['{"name":"\\ud800"}', "body/name"],
      ['{"a":[1,{"b":"x\\uDC00y"}]}', "body/a/1/b"],
      ['{"\\udbff":1}', "body/\ufffd"],
    ];
    const refused: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!["post", "put", "patch", "delete"].includes(method)) continue;
        // The credential the operation asks for, so that nothing but the body is wrong.
        const schemes = (operation.security ?? []).flatMap((s) => Object.keys(s));
        const credential = schemes.includes("bearer") ? bearer(fx.jwts[0]) : schemes.length > 0 ? apiKey(fx.keys[0]) : {};
        for (const [body, where] of bodies) {
          const reply = await call(method.toUpperCase(), path.replace(/\{[^}]+\}/g, "x"), { body, headers: { ...credential, "content-type": "application/json" } });
          if (reply.status !== 400 || reply.body.error !== "invalid_request" || !reply.body.message.startsWith(`${where}: `)) {
            throw new Error(`${method.toUpperCase()} ${path} ${body} -> ${reply.status} ${reply.text.slice(0, 200)}`);
          }
        }
        refused.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(refused.length).toBe(ROUTES.filter((r) => r.method !== "GET" && !r.path.startsWith("/console")).length);
  });

  const perRoute = Math.ceil(TOTAL / ROUTES.length);
  ROUTES.forEach((route, index) => {
    test(`${route.method} ${route.path}`, async () => {
      await fc.assert(fc.asyncProperty(requestFor(route), send), { seed: SEED + index, numRuns: perRoute, endOnFailure: false });
    }, 120_000);
  });

  test(`at least ${MIN_SENT} requests were answered, none with a 5xx`, () => {
    console.log(`fuzz: ${sent} requests; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
    expect(sent).toBeGreaterThanOrEqual(MIN_SENT);
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
    // The fuzzer reached handlers too, not only the front door.
    for (const status of [200, 201, 400, 401, 404, 409, 413, 415]) expect(statuses.get(status) ?? 0).toBeGreaterThan(0);
  });

  test("the service is still up and correct, its log unbroken, and its memory bounded", async () => {
    expect((await call("GET", "/health")).status).toBe(200);
    const fresh = await signup();
    remember(fresh.password);
    remember(fresh.token);
    remember(fresh.apiKey);
    const decided = await protect(fresh.apiKey);
    expect(decided.status).toBe(200);
    expect((await call("GET", `/customer/receipts/${decided.body.receipt_id}`, { headers: bearer(fresh.token) })).status).toBe(200);
    // Whatever the requests carried (newlines, control characters, quotes), each log entry is
    // still exactly one line of JSON: no log injection.
    for (const line of logLines) {
      expect(line.includes("\n")).toBe(false);
      JSON.parse(line);
    }
    Bun.gc(true);
    const m = process.memoryUsage();
    const heapMb = (m.heapUsed - memoryBefore.heap) / 2 ** 20;
    const rssMb = (m.rss - memoryBefore.rss) / 2 ** 20;
    console.log(`fuzz: heap ${heapMb.toFixed(1)} MB, rss ${rssMb.toFixed(1)} MB more than before (now ${(m.heapUsed / 2 ** 20).toFixed(0)} / ${(m.rss / 2 ** 20).toFixed(0)} MB)`);
    // Logs and the embedded database (in memory here) grow with what was stored; nothing else may.
    expect(heapMb).toBeLessThan(96);
    expect(rssMb).toBeLessThan(384);
  });
});

describe("over real HTTPS", () => {
  let server: Wire;
  beforeAll(async () => {
    server = await startWire();
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("200 generated requests to the listening server: no 5xx, and it still answers", async () => {
    const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;
    const routes = fc.constantFrom(...ROUTES).chain((r) => requestFor(r));
    const samples = fc.sample(routes, { seed: SEED, numRuns: 200 });
    for (const g of samples) {
      const body = bodyOf(g);
      let response: Response;
      try {
        response = await fetch(server.url + g.path, { ...insecure, method: g.method, headers: g.headers, body });
      } catch (err) {
        // Some generated requests cannot be sent by a client at all; the server is not at fault.
        if (err instanceof TypeError && /header|url|method/i.test(String(err))) continue;
        throw err;
      }
      const text = await response.text();
      expect(response.status).toBeLessThan(500);
      if (response.status >= 400 && g.method !== "HEAD") {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        const problem = errorProblem({ status: response.status, headers: response.headers, body: parsed, text });
        if (problem) throw new Error(`${problem}: ${g.method} ${g.path} -> ${response.status} ${text.slice(0, 200)}`);
      }
    }
    const health = await fetch(`${server.url}/health`, insecure);
    expect(health.status).toBe(200);
  }, 120_000);

  test("no secret used here reaches a log line", () => {
    expectNoSecretIn([...server.lines, ...logLines]);
  });
});
