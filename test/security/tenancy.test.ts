// One tenant against another: every id of another tenant (key, receipt, upgrade request) answers
// exactly as an id that does not exist, 404 and never 403; an API key works only from the
// X-API-Key header, never from a query string.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, apiKey, protect } from "../helpers/customer.ts";
import { call, logLines, signup, type Reply } from "../helpers/service.ts";
import { comparable, expectCleanError, expectNoSecretIn, remember, startWire, wire, type Wire } from "./helpers.ts";

type Tenant = Awaited<ReturnType<typeof signup>>;
let owner: Tenant;
let stranger: Tenant;
const ids: Record<string, string> = {};
let server: Wire;

const unknown = (prefix: string) => `${prefix}${"A".repeat(22)}`;

beforeAll(async () => {
  [owner, stranger] = await Promise.all([signup(), signup()]);
  for (const t of [owner, stranger]) for (const s of [t.password, t.token, t.apiKey]) remember(s);
  const jwt = bearer(owner.token);
  const decided = await protect(owner.apiKey);
  const key = await call("POST", "/customer/keys", { json: { label: "owned" }, headers: jwt });
  remember(key.body.secret);
  const upgrade = await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "tenancy" }, headers: jwt });
  Object.assign(ids, { receipt: decided.body.receipt_id, key: key.body.key_id, upgrade: upgrade.body.request_id });
  server = await startWire();
});
afterAll(async () => {
  await server?.stop();
});

// Each probe: how the stranger asks for the owner's resource, and the same ask for an unknown id.
const probes: [string, (id: string) => Promise<Reply>, string, string][] = [
  ["GET a receipt", (id) => call("GET", `/customer/receipts/${id}`, { headers: bearer(stranger.token) }), "receipt", "rcpt_"],
  ["GET a receipt's proof", (id) => call("GET", `/customer/receipts/${id}/proof`, { headers: bearer(stranger.token) }), "receipt", "rcpt_"],
  ["execute a receipt", (id) => call("POST", "/v1/execute", { json: { receipt_id: id }, headers: apiKey(stranger.apiKey) }), "receipt", "rcpt_"],
  ["rotate a key", (id) => call("POST", `/customer/keys/${id}/rotate`, { headers: bearer(stranger.token) }), "key", "key_"],
  ["revoke a key", (id) => call("POST", `/customer/keys/${id}/revoke`, { headers: bearer(stranger.token) }), "key", "key_"],
  ["cancel an upgrade request", (id) => call("POST", `/customer/upgrades/${id}/cancel`, { headers: bearer(stranger.token) }), "upgrade", "upgr_"],
];

describe("another tenant's ids: 404 not_found, the same answer as an id that does not exist", () => {
  for (const [name, ask, kind, prefix] of probes) {
    test(name, async () => {
      const theirs = await ask(ids[kind]);
      const missing = await ask(unknown(prefix));
      expectCleanError(theirs, 404, "not_found");
      expect(comparable(theirs)).toEqual(comparable(missing));
      // The id is not echoed, so nothing confirms it was seen.
      expect(theirs.text).not.toContain(ids[kind]);
    });
  }

  test("the owner's resources are untouched by the stranger's attempts", async () => {
    const jwt = bearer(owner.token);
    expect((await call("GET", `/customer/receipts/${ids.receipt}`, { headers: jwt })).status).toBe(200);
    const keys = (await call("GET", "/customer/keys", { headers: jwt })).body.keys as { key_id: string; status: string }[];
    expect(keys.find((k) => k.key_id === ids.key)?.status).toBe("active");
    const upgrades = (await call("GET", "/customer/upgrades", { headers: jwt })).body.upgrades as { request_id: string; status: string }[];
    expect(upgrades.find((u) => u.request_id === ids.upgrade)?.status).toBe("pending");
    // Executing it is still possible for its owner: the stranger's attempt did not use it up.
    expect((await call("POST", "/v1/execute", { json: { receipt_id: ids.receipt }, headers: apiKey(owner.apiKey) })).status).toBe(200);
  });

  test("lists show only the caller's own resources", async () => {
    const jwt = bearer(stranger.token);
    const receipts = (await call("GET", "/customer/receipts", { headers: jwt })).body.receipts as { tenant_id: string; kind: string }[];
    const keys = (await call("GET", "/customer/keys", { headers: jwt })).body.keys as { key_id: string; tenant_id: string }[];
    const upgrades = (await call("GET", "/customer/upgrades", { headers: jwt })).body.upgrades as unknown[];
    // The stranger's own log: its signup's key.created event, none of the owner's receipts.
    expect(receipts.map((r) => [r.tenant_id, r.kind])).toEqual([[stranger.tenantId, "event"]]);
    expect(keys.every((k) => k.tenant_id === stranger.tenantId)).toBe(true);
    expect(upgrades).toEqual([]);
  });

  test("another tenant's receipt shown to /v1/verify is not 'stored' for the caller", async () => {
    const receipt = (await call("GET", `/customer/receipts/${ids.receipt}`, { headers: bearer(owner.token) })).body.receipt;
    const mine = await call("POST", "/v1/verify", { json: { receipt }, headers: apiKey(owner.apiKey) });
    const theirs = await call("POST", "/v1/verify", { json: { receipt }, headers: apiKey(stranger.apiKey) });
    expect(mine.body.checks.stored).toBe(true);
    expect(theirs.body).toMatchObject({ verified: false, checks: { stored: false } });
  });
});

describe("API keys only in the X-API-Key header (over HTTPS)", () => {
  test("a key in the query string is ignored: 401, and no receipt is stored", async () => {
    for (const name of ["api_key", "apikey", "key", "x-api-key", "X-API-Key", "access_token"]) {
      const reply = await wire(server.url, "POST", `/v1/protect?${name}=${encodeURIComponent(owner.apiKey)}`, { json: { action: "document.read" } });
      expectCleanError(reply, 401, "unauthorized");
    }
    const simulate = await wire(server.url, "POST", `/v1/simulate?api_key=${owner.apiKey}`, { json: { preset: "read_document" } });
    expectCleanError(simulate, 401, "unauthorized");
    const list = await call("GET", "/customer/receipts", { headers: bearer(owner.token) });
    expect(list.body.receipts.filter((r: { kind: string }) => r.kind === "protect")).toHaveLength(1);
  });

  test("a key as a bearer token, a cookie or a basic password is not a key", async () => {
    for (const headers of [bearer(owner.apiKey), { cookie: `api_key=${owner.apiKey}` }, { authorization: `Basic ${btoa(`${owner.apiKey}:`)}` }]) {
      expectCleanError(await wire(server.url, "POST", "/v1/protect", { json: { action: "document.read" }, headers }), 401, "unauthorized");
    }
    // The header itself works over the same connection.
    expect((await wire(server.url, "POST", "/v1/protect", { json: { action: "document.read" }, headers: apiKey(owner.apiKey) })).status).toBe(200);
  });

  test("the request log names the route, never the raw path or query", () => {
    const lines = server.lines.filter((l) => l.includes('"event":"request"'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain("?");
  });
});

test("no password, token, JWT or key used here reaches a log line", () => {
  expectNoSecretIn([...server.lines, ...logLines]);
});
