// AuthZEN Search's bounds, on a store held in memory (src/authzen/search.ts): a page examines at
// most SEARCH_MAX_SCANNED entities and then ends early with a token to go on; tokens are bound to
// the request they continue. Through HTTP: test/authzen/search.test.ts.
import { describe, expect, test } from "bun:test";
import { toProtectInput } from "../../src/authzen/mapping.ts";
import { PROBE_ID, SEARCH_MAX_SCANNED, actionCandidates, candidateInput, decodeSearchToken, encodeSearchToken, searchEntities, type Searching } from "../../src/authzen/search.ts";
import type { PolicyDocument } from "../../src/decide/policy.ts";
import type { KeyPrincipal } from "../../src/keys/authenticate.ts";

const pad = (i: number) => `u${String(i).padStart(5, "0")}`;
const STORE = Array.from({ length: SEARCH_MAX_SCANNED + 1000 }, (_, i) => ({ type: "user", id: pad(i), attributes: {}, parents: [], version: 1, updated_at: "", updated_by: "" }));
// Only the last stored user may read.
const POLICY: PolicyDocument = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [{ id: "last", effect: "allow", reason: "the last one", when: { actions: ["read"], where: { "subject.id": { eq: pad(STORE.length - 1) } } } }],
} as PolicyDocument;

function fakeDeps(): Searching & { listed: number } {
  const deps = {
    listed: 0,
    now: () => new Date("2026-12-07T00:00:00Z"),
    policies: { forRef: async () => ({ ref: { policy_id: "pol_x", version: 1, hash: "0x" }, document: POLICY }) },
    entities: { find: async () => ({}) },
    db: {
      query: async (name: string, params: unknown[]) => {
        if (name !== "entities/list") throw new Error(`unexpected query ${name}`);
        const [, type, afterType, afterId, count] = params as [string, string, string | null, string | null, number];
        const rows = STORE.filter((e) => e.type === type && (afterType === null || e.type > afterType || (e.type === afterType && e.id > afterId!))).slice(0, count);
        deps.listed += rows.length;
        return rows;
      },
    },
  };
  return deps as unknown as Searching & { listed: number };
}

const principal = { tenant_id: "ten_1", key_id: "key_1", policy: null, rules: null } as unknown as KeyPrincipal;
const REQUEST = { subject: { type: "user" }, action: { name: "read" }, resource: { type: "doc", id: "1" } };

describe("a page's work is bounded", () => {
  test(`at most ${SEARCH_MAX_SCANNED} entities examined: the first page ends early, empty, with a token; the next finds the last user`, async () => {
    const deps = fakeDeps();
    const first = await searchEntities(deps, principal, "subject", REQUEST);
    expect(first.results).toEqual([]);
    expect(first.page?.next_token).not.toBe("");
    expect(deps.listed).toBeLessThanOrEqual(SEARCH_MAX_SCANNED);
    const second = await searchEntities(deps, principal, "subject", { ...REQUEST, page: { token: first.page!.next_token } });
    expect(second).toEqual({ page: { next_token: "", count: 1 }, results: [{ type: "user", id: pad(STORE.length - 1) }] });
    expect(deps.listed).toBe(STORE.length);
  });
});

describe("candidates", () => {
  test("a candidate's input is the one the mapping makes of the request with its id", () => {
    const request = {
      subject: { type: "user", id: "alice", properties: { department: "Sales", groups: ["a", "b"] } },
      action: { name: "can_read", properties: { amount: 12, currency: "USD", method: "GET" } },
      resource: { type: "account", id: "123", properties: { owner: "bob" } },
      context: { time: "2024-10-26T01:22-07:00", ip: "10.0.0.1" },
    };
    const ids = ["u1", "a/b/c", "ünï cødé 🙂", "x".repeat(128), "1", "subject.id", " "];
    for (const kind of ["subject", "resource"] as const) {
      const probe = toProtectInput({ ...request, [kind]: { ...request[kind], id: PROBE_ID } });
      for (const id of ids) {
        const expected = toProtectInput({ ...request, [kind]: { ...request[kind], id } });
        expect(candidateInput(probe, kind, request[kind].type, id)).toEqual(expected);
      }
    }
  });
});

describe("tokens", () => {
  test("a token decodes only for its own kind and request hash", () => {
    const token = encodeSearchToken("subject", "abc", ["user", "u1"]);
    expect(decodeSearchToken(token, "subject", "abc", 2)).toEqual(["user", "u1"]);
    expect(() => decodeSearchToken(token, "resource", "abc", 2)).toThrow("not a next_token");
    expect(() => decodeSearchToken(token, "subject", "abd", 2)).toThrow("not a next_token");
    expect(() => decodeSearchToken(token, "subject", "abc", 1)).toThrow("not a next_token");
    expect(() => decodeSearchToken(encodeSearchToken("subject", "abc", ["user", ""]), "subject", "abc", 2)).toThrow("not a next_token");
  });

  test("the actions a search examines: named literally by the rules, once, in order; the key's list narrows them", () => {
    const doc = { default_effect: "deny", default_reason: "x", rules: [
      { id: "a", effect: "allow", reason: "a", when: { actions: ["write", "read", "admin.*"] } },
      { id: "b", effect: "deny", reason: "b", when: { actions: ["read", "delete"] } },
      { id: "c", effect: "allow", reason: "c", when: {} },
    ] } as unknown as PolicyDocument;
    expect(actionCandidates(doc, { rules: null })).toEqual(["delete", "read", "write"]);
    expect(actionCandidates(doc, { rules: { actions: { exact: new Set(["read"]), prefixes: ["wr"] } } as never })).toEqual(["read", "write"]);
  });
});
