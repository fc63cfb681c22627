// The AuthZEN Search APIs through HTTP, as a PEP calls them (docs/authzen.md, "Search"): subject,
// resource and action search over the tenant's stored entities under the active policy; paging
// (every result once, none skipped, a token bound to its request); another tenant's entities never
// answered; a deny rule excluding; dry runs (no receipt, no quota); bad input (400, never 500).
//
// And the working group's search scenario: test/authzen/interop/search-{subject,resource,action}-results.json
// are copies of interop/authzen-search-demo/test/{subject,resource,action}/results.json of the
// openid/authzen repository at commit e287920eed842b227e38531c1735b712337ca44d. The policy
// (interop/search-policy.json) names no user; the users and records of the demo
// (interop/authzen-search-demo/data/{users,records}.json, ids as strings) are stored as entities
// (interop/search-entities.json). Each answer is judged as their runner.ts judges
// it: node's deepStrictEqual of the whole response body against `expected`, the results sorted on
// both sides (their sort by type then id; for actions, which have neither, by name).
import { beforeAll, describe, expect, test } from "bun:test";
import { deepStrictEqual } from "node:assert";
import { apiKey, bearer, setPlan, setUsage } from "../helpers/customer.ts";
import { call, expectErrorShape, signup, type Reply } from "../helpers/service.ts";
import SEARCH_POLICY from "./interop/search-policy.json";
import SEARCH_ENTITIES from "./interop/search-entities.json";
import SUBJECT_RESULTS from "./interop/search-subject-results.json";
import RESOURCE_RESULTS from "./interop/search-resource-results.json";
import ACTION_RESULTS from "./interop/search-action-results.json";

type Tenant = Awaited<ReturnType<typeof signup>>;
type Kind = "subject" | "resource" | "action";

async function tenantWith(entities: unknown[], policy: unknown): Promise<Tenant> {
  const tenant = await signup();
  await setPlan(tenant.tenantId, "pro");
  if (entities.length > 0) {
    const stored = await call("PUT", "/customer/entities", { json: { entities }, headers: bearer(tenant.token) });
    expect(stored.status).toBe(200);
  }
  const put = await call("PUT", "/customer/policy", { json: { document: policy }, headers: bearer(tenant.token) });
  expect(put.status).toBe(200);
  return tenant;
}

/** As their runner sends it, plus the credential (as AuthZEN clients send it: Authorization: Bearer). */
const search = (tenant: Tenant, kind: Kind, json: unknown, headers: Record<string, string> = { authorization: `Bearer ${tenant.apiKey}` }) =>
  call("POST", `/access/v1/search/${kind}`, { json, headers });

const receiptCount = async (tenant: Tenant) => (await call("GET", "/customer/receipts?limit=100", { headers: bearer(tenant.token) })).body.receipts.length as number;

type Item = { type?: string; id?: string; name?: string };
/** Their runner's order, by type then id; actions (no type, no id) by name. */
const sorted = (items: Item[]) =>
  [...items].sort((a, b) => {
    if (a.type !== b.type) return (a.type ?? "").localeCompare(b.type ?? "");
    if (a.id !== undefined && b.id !== undefined) return a.id.localeCompare(b.id);
    return (a.name ?? "").localeCompare(b.name ?? "");
  });

/** Their runner's judgement: the whole body, results sorted on both sides, deep and strict. */
function judged(actual: { results?: Item[] }, expected: { results: Item[] }): boolean {
  try {
    deepStrictEqual({ ...actual, results: sorted(actual.results ?? []) }, { ...expected, results: sorted(expected.results ?? []) });
    return true;
  } catch {
    return false;
  }
}

describe("the working group's search scenario", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await tenantWith(SEARCH_ENTITIES, SEARCH_POLICY);
  });

  test("the policy names no user, and the entities are the demo's six users and twenty records", () => {
    const text = JSON.stringify(SEARCH_POLICY);
    for (const user of ["alice", "bob", "carol", "dan", "erin", "felix"]) expect(text).not.toContain(user);
    expect(SEARCH_ENTITIES.filter((e) => e.type === "user").length).toBe(6);
    expect(SEARCH_ENTITIES.filter((e) => e.type === "record").length).toBe(20);
  });

  for (const [kind, file] of [["subject", SUBJECT_RESULTS], ["resource", RESOURCE_RESULTS], ["action", ACTION_RESULTS]] as const) {
    test(`${kind} search: every case of results.json answered as expected`, async () => {
      const wrong: unknown[] = [];
      for (const { request, expected } of file.evaluation) {
        const reply = await search(tenant, kind, request);
        if (reply.status !== 200 || !judged(reply.body, expected as { results: Item[] })) wrong.push({ request, expected, got: reply.body });
      }
      expect(wrong).toEqual([]);
      expect(file.evaluation.length).toBeGreaterThan(10);
    });
  }

  test("every result, evaluated, is decision true (the specification's semantics); and nothing was stored", async () => {
    const before = await receiptCount(tenant);
    const found = await search(tenant, "resource", { subject: { type: "user", id: "erin" }, action: { name: "edit" }, resource: { type: "record" } });
    expect(found.body.results.length).toBeGreaterThan(0);
    expect(await receiptCount(tenant)).toBe(before);
    for (const resource of found.body.results) {
      const reply = await call("POST", "/access/v1/evaluation", { json: { subject: { type: "user", id: "erin" }, action: { name: "edit" }, resource }, headers: apiKey(tenant.apiKey) });
      expect(reply.body.decision).toBe(true);
    }
  });
});

// Twenty-three users, u00 to u22: active unless their number is a multiple of 4; u05 and u17 blocked.
const USERS = Array.from({ length: 23 }, (_, i) => ({
  type: "user",
  id: `u${String(i).padStart(2, "0")}`,
  attributes: { active: i % 4 !== 0, blocked: i === 5 || i === 17 },
}));
const ALLOWED = USERS.filter((u) => u.attributes.active && !u.attributes.blocked).map((u) => u.id);
const PAGING_POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  entities: { subject: { types: ["user"], attributes: { active: { type: "boolean" }, blocked: { type: "boolean" } } } },
  rules: [
    { id: "blocked", effect: "deny", reason: "blocked users read nothing", when: { actions: ["read"], where: { "subject.attr.blocked": { eq: true } } } },
    { id: "active_read", effect: "allow", reason: "active users read", when: { actions: ["read"], where: { "subject.attr.active": { eq: true } } } },
    { id: "write", effect: "allow", reason: "anyone writes drafts", when: { actions: ["write"], resources: ["doc/draft"] } },
    { id: "approve", effect: "require_approval", reason: "approvals need people", when: { actions: ["approve"] }, approval: { quorum: 1, expires_in: 3600 } },
    { id: "admin_prefix", effect: "allow", reason: "admin actions", when: { actions: ["admin.*"] } },
  ],
};
const WHO_READS = { subject: { type: "user" }, action: { name: "read" }, resource: { type: "doc", id: "d1" } };

describe("subject search, paged", () => {
  let tenant: Tenant;
  let other: Tenant;
  beforeAll(async () => {
    tenant = await tenantWith(USERS, PAGING_POLICY);
    // Another tenant with users of the same type, all active: none of them may reach the first tenant's answers.
    other = await tenantWith([{ type: "user", id: "intruder", attributes: { active: true, blocked: false } }, { type: "user", id: "u00", attributes: { active: true, blocked: false } }], PAGING_POLICY);
  });

  test("without a page: every allowed user, in id order, and no page object", async () => {
    const reply = await search(tenant, "subject", WHO_READS);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ results: ALLOWED.map((id) => ({ type: "user", id })) });
  });

  test("a deny rule excludes: the blocked users are active but never answered", async () => {
    const reply = await search(tenant, "subject", WHO_READS);
    const ids = reply.body.results.map((r: Item) => r.id);
    expect(ids).not.toContain("u05");
    expect(ids).not.toContain("u17");
    expect(ids).toContain("u06");
  });

  for (const limit of [1, 4, 5, 15, 1000]) {
    test(`pages of ${limit}: every allowed user exactly once, in order, the last page's next_token empty`, async () => {
      const seen: string[] = [];
      let token: string | undefined;
      for (let pages = 0; pages < 40; pages++) {
        const reply: Reply = await search(tenant, "subject", { ...WHO_READS, page: { limit, ...(token ? { token } : {}) } });
        expect(reply.status).toBe(200);
        expect(reply.body.results.length).toBeLessThanOrEqual(limit);
        expect(reply.body.page.count).toBe(reply.body.results.length);
        seen.push(...reply.body.results.map((r: Item) => r.id!));
        token = reply.body.page.next_token;
        if (token === "") break;
      }
      expect(token).toBe("");
      expect(seen).toEqual(ALLOWED);
    });
  }

  test("a token continues only its own request: another action, type, limit or tenant is refused (400)", async () => {
    const first = await search(tenant, "subject", { ...WHO_READS, page: { limit: 3 } });
    const token = first.body.page.next_token as string;
    expect(token).not.toBe("");
    const next = await search(tenant, "subject", { ...WHO_READS, page: { limit: 3, token } });
    expect(next.status).toBe(200);
    expect(next.body.results[0].id).toBe(ALLOWED[3]);
    // The ignored id may change: it is ignored.
    expect((await search(tenant, "subject", { ...WHO_READS, subject: { type: "user", id: "whoever" }, page: { limit: 3, token } })).body).toEqual(next.body);
    for (const changed of [
      { ...WHO_READS, action: { name: "write" }, page: { limit: 3, token } },
      { ...WHO_READS, resource: { type: "doc", id: "d2" }, page: { limit: 3, token } },
      { ...WHO_READS, page: { limit: 4, token } },
      { ...WHO_READS, context: { time: "now" }, page: { limit: 3, token } },
    ]) {
      expectErrorShape(await search(tenant, "subject", changed), 400, "invalid_request");
    }
    expectErrorShape(await search(tenant, "resource", { subject: { type: "user", id: "u01" }, action: { name: "read" }, resource: { type: "user" }, page: { limit: 3, token } }), 400, "invalid_request");
    expectErrorShape(await search(tenant, "subject", { ...WHO_READS, page: { limit: 3, token: "bm90IGEgdG9rZW4" } }), 400, "invalid_request");
    expectErrorShape(await search(tenant, "subject", { ...WHO_READS, page: { limit: 3, token: "%%%" } }), 400, "invalid_request");
  });

  test("tenant isolation: another tenant's entities are never answered, its key sees only its own", async () => {
    const mine = await search(tenant, "subject", { ...WHO_READS, page: { limit: 1000 } });
    expect(mine.body.results.map((r: Item) => r.id)).not.toContain("intruder");
    const theirs = await search(other, "subject", WHO_READS);
    expect(theirs.body).toEqual({ results: [{ type: "user", id: "intruder" }, { type: "user", id: "u00" }] });
    // The other tenant's token does not page through this tenant's entities.
    const page = await search(other, "subject", { ...WHO_READS, page: { limit: 1 } });
    const reply = await search(tenant, "subject", { ...WHO_READS, page: { limit: 1, token: page.body.page.next_token } });
    expect(reply.status).toBe(200);
    expect(reply.body.results.map((r: Item) => r.id)).toEqual(["u01"]);
  });

  test("resource search over the same store: the entities of the type searched for that are allowed", async () => {
    const reply = await search(tenant, "resource", { subject: { type: "user", id: "u01" }, action: { name: "write" }, resource: { type: "doc" } });
    expect(reply.status).toBe(200);
    // No stored doc: nothing to answer, even though writing doc/draft is allowed.
    expect(reply.body).toEqual({ results: [] });
    const users = await search(tenant, "resource", { subject: { type: "user", id: "u01" }, action: { name: "read" }, resource: { type: "user" }, page: { limit: 2 } });
    expect(users.body.results.length).toBe(2);
  });

  test("action search: the named actions allowed, never one held for approval, never a prefix pattern", async () => {
    const active = await search(tenant, "action", { subject: { type: "user", id: "u01" }, resource: { type: "doc", id: "draft" } });
    expect(active.body).toEqual({ results: [{ name: "read" }, { name: "write" }] });
    const blocked = await search(tenant, "action", { subject: { type: "user", id: "u05" }, resource: { type: "doc", id: "other" } });
    expect(blocked.body).toEqual({ results: [] });
    const paged = await search(tenant, "action", { subject: { type: "user", id: "u01" }, resource: { type: "doc", id: "draft" }, page: { limit: 1 } });
    expect(paged.body.results).toEqual([{ name: "read" }]);
    const rest = await search(tenant, "action", { subject: { type: "user", id: "u01" }, resource: { type: "doc", id: "draft" }, page: { limit: 1, token: paged.body.page.next_token } });
    expect(rest.body).toEqual({ page: { next_token: "", count: 1 }, results: [{ name: "write" }] });
  });

  test("dry runs: no receipt stored, and a tenant past its daily protect quota still searches", async () => {
    const before = await receiptCount(tenant);
    await search(tenant, "subject", WHO_READS);
    await search(tenant, "action", { subject: { type: "user", id: "u01" }, resource: { type: "doc", id: "draft" } });
    expect(await receiptCount(tenant)).toBe(before);
    const spent = await tenantWith(USERS, PAGING_POLICY);
    await setUsage(spent.tenantId, 1_000_000, 0);
    expectErrorShape(await call("POST", "/access/v1/evaluation", { json: { ...WHO_READS, subject: { type: "user", id: "u01" } }, headers: apiKey(spent.apiKey) }), 429, "quota_exceeded");
    const reply = await search(spent, "subject", WHO_READS);
    expect(reply.status).toBe(200);
    expect(reply.body.results.length).toBe(ALLOWED.length);
  });
});

describe("the key's actions and usage rules", () => {
  test("a key limited to some actions: subject and resource search of another are 403 action_not_allowed; action search leaves the others out", async () => {
    const tenant = await tenantWith(USERS, PAGING_POLICY);
    const keys = (await call("GET", "/customer/keys", { headers: bearer(tenant.token) })).body.keys as { key_id: string }[];
    expect((await call("PATCH", `/customer/keys/${keys[0]!.key_id}`, { json: { actions: ["write"] }, headers: bearer(tenant.token) })).status).toBe(200);
    expectErrorShape(await search(tenant, "subject", WHO_READS), 403, "action_not_allowed");
    expectErrorShape(await search(tenant, "resource", { subject: { type: "user", id: "u01" }, action: { name: "read" }, resource: { type: "user" } }), 403, "action_not_allowed");
    const actions = await search(tenant, "action", { subject: { type: "user", id: "u01" }, resource: { type: "doc", id: "draft" } });
    expect(actions.body).toEqual({ results: [{ name: "write" }] });
  });

  test("a usage rule is decided on the committed totals, as simulate decides it; a search adds nothing to them", async () => {
    const policy = {
      default_effect: "deny",
      default_reason: "no_rule_matched",
      rules: [
        { id: "mails_per_day", effect: "deny", reason: "at most two mails a day", when: { actions: ["mail"], usage: { sum: "count", per: "tenant", window: "day", gt: 2 } } },
        { id: "mail", effect: "allow", reason: "mail", when: { actions: ["mail", "read"] } },
      ],
    };
    const tenant = await tenantWith([], policy);
    const here = { subject: { type: "user", id: "u01" }, resource: { type: "inbox", id: "1" } };
    const names = async () => (await search(tenant, "action", here)).body.results.map((r: Item) => r.name);
    // Many searches first: none counts.
    for (let i = 0; i < 4; i++) expect(await names()).toEqual(["mail", "read"]);
    const send = async () => (await call("POST", "/access/v1/evaluation", { json: { ...here, action: { name: "mail" } }, headers: apiKey(tenant.apiKey) })).body.decision;
    expect(await send()).toBe(true);
    expect(await names()).toEqual(["mail", "read"]);
    expect(await send()).toBe(true);
    // Two mails counted: a third would pass the bound, so the search no longer answers it.
    expect(await names()).toEqual(["read"]);
    expect(await send()).toBe(false);
  });
});

describe("credentials, metadata and bad input", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await tenantWith(USERS, PAGING_POLICY);
  });

  test("the metadata names the three search endpoints", async () => {
    const reply = await call("GET", "/.well-known/authzen-configuration");
    expect(reply.status).toBe(200);
    for (const kind of ["subject", "resource", "action"]) expect(reply.body[`search_${kind}_endpoint`]).toEndWith(`/access/v1/search/${kind}`);
  });

  test("no key or a wrong one: 401; X-API-Key works as Bearer does", async () => {
    for (const kind of ["subject", "resource", "action"] as const) {
      expectErrorShape(await search(tenant, kind, WHO_READS, {}), 401, "unauthorized");
      expectErrorShape(await search(tenant, kind, WHO_READS, { authorization: "Bearer wk_live_nope" }), 401, "unauthorized");
    }
    expect((await search(tenant, "subject", WHO_READS, apiKey(tenant.apiKey))).status).toBe(200);
  });

  test("bad input: a clear 400, never a 500", async () => {
    const bad: [Kind, unknown][] = [
      ["subject", { action: { name: "read" }, resource: { type: "doc", id: "1" } }],
      ["subject", { subject: { id: "u01" }, action: { name: "read" }, resource: { type: "doc", id: "1" } }],
      ["subject", { subject: { type: "" }, action: { name: "read" }, resource: { type: "doc", id: "1" } }],
      ["subject", { subject: { type: "user" }, action: { name: "read me" }, resource: { type: "doc", id: "1" } }],
      ["subject", { subject: { type: "user" }, resource: { type: "doc", id: "1" } }],
      ["subject", { ...WHO_READS, page: { limit: 0 } }],
      ["subject", { ...WHO_READS, page: { limit: 1001 } }],
      ["subject", { ...WHO_READS, page: { token: "" } }],
      ["subject", { ...WHO_READS, context: { "bad name!": 1 } }],
      ["resource", { subject: { type: "user", id: "u01" }, action: { name: "read" }, resource: { id: "1" } }],
      ["resource", { subject: { type: "user" }, action: { name: "read" }, resource: { type: "doc" } }],
      ["action", { subject: { type: "user", id: "u01" }, resource: { type: "doc" } }],
      ["action", { subject: { type: "user", id: "u01" } }],
      ["action", [1, 2]],
    ];
    for (const [kind, json] of bad) {
      const reply = await search(tenant, kind, json);
      expect({ kind, json, status: reply.status }).toEqual({ kind, json, status: 400 });
      expect(reply.body.error).toBe("invalid_request");
    }
    const notJson = await call("POST", "/access/v1/search/subject", { body: "subject=user", headers: { authorization: `Bearer ${tenant.apiKey}`, "content-type": "text/plain" } });
    expect(notJson.status).toBe(400);
  });
});
