// The request shapes of the bench's scenarios, for tenants set up by scripts/bench/service.ts:
// one table for bench.ts, ab.ts and the one-scenario tools (profile, threads, rss).
import { insecure, type Account } from "./service.ts";
import type { Shape } from "./wrk.ts";

/** A budget that never binds: what a usage rule costs a protect (docs/policy.md, "Budgets and rate windows"). */
export const BUDGET_POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "budget", effect: "deny", reason: "daily_budget", when: { actions: ["payment.*"], currency: { eq: "USD" }, usage: { sum: "amount", per: "key", window: "day", gt: 1e14 } } },
    { id: "payments", effect: "allow", reason: "ok", when: { actions: ["payment.*"] } },
  ],
};

/**
 * One tenant's policy over stored attributes (docs/policy.md, "Entities and attributes"): payments
 * by payers to gold vendors, read from the 10,000 entities of ENTITIES; documents by a rule that
 * reads none, for the same tenant's requests without entities.
 */
export const ENTITY_POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  entities: {
    subject: { types: ["user"], attributes: { roles: { type: "list" } } },
    resource: { types: ["vendor"], attributes: { tier: { type: "string" } } },
  },
  rules: [
    { id: "gold_payments", effect: "allow", reason: "a payer pays a gold vendor", when: { actions: ["payment.*"], where: { "subject.attr.roles": { contains: "payer" }, "resource.attr.tier": { eq: "gold" } } } },
    { id: "documents", effect: "allow", reason: "ok", when: { actions: ["document.*"] } },
  ],
};

/**
 * ENTITY_POLICY without its entities: the same rules, ids and reasons, none reading an attribute.
 * The *_no_entities twins decide the same request under it in a tenant of their own, so that
 * the two differ by the entities alone (the lookup, the conditions, the reads in the payload).
 */
export const ENTITY_TWIN_POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: ENTITY_POLICY.rules.map(({ when: { where: _where, ...when }, ...rule }) => ({ ...rule, when })),
};

/** ENTITY_POLICY's tenant's entities: 9,000 users (every third a payer) and 1,000 vendors (every other gold). */
export function benchEntities(): { type: string; id: string; attributes: Record<string, string | string[]> }[] {
  const users = Array.from({ length: 9_000 }, (_, i) => ({ type: "user", id: `u${i}`, attributes: { roles: i % 3 === 0 ? ["payer", "staff"] : ["staff"], team: `t${i % 40}` } }));
  const vendors = Array.from({ length: 1_000 }, (_, i) => ({ type: "vendor", id: `v${i}`, attributes: { tier: i % 2 === 0 ? "gold" : "silver", country: "DE" } }));
  return [...users, ...vendors];
}

export function scenarios(accounts: Account[], password: string, budget?: Account, entities?: { tenant: Account; twin: Account }): Record<string, Shape> {
  const account = accounts[0];
  const key = { "X-API-Key": account.api_key };
  // Many tenants, as in service: each request takes the next tenant's key (round robin).
  const keys = accounts.map((a) => `${a.tenant_id}=${a.api_key}`);
  const payment = { action: "payment.send", resource: "vendor/acme", amount: 120, currency: "USD" };
  const entityPayment = { action: "payment.send", resource: "vendor/v42", amount: 120, currency: "USD", context: { "subject.type": "user", "subject.id": "u4242" } };
  return {
    simulate: { path: "/v1/simulate", method: "POST", body: { preset: "small_payment" }, headers: key },
    protect: { path: "/v1/protect", method: "POST", body: payment, keys },
    protect_one_tenant: { path: "/v1/protect", method: "POST", body: payment, headers: key },
    // One tenant whose policy holds a per-key daily budget (BUDGET_POLICY): beside protect_one_tenant.
    ...(budget ? { protect_budget: { path: "/v1/protect", method: "POST", body: payment, headers: { "X-API-Key": budget.api_key } } } : {}),
    // One tenant with ENTITY_POLICY and 10,000 entities: a decision that reads a stored user and vendor,
    // beside the same request in a tenant under ENTITY_TWIN_POLICY, which reads none (the entities' cost is the ratio).
    ...(entities
      ? {
          simulate_no_entities: { path: "/v1/simulate", method: "POST", body: { input: entityPayment }, headers: { "X-API-Key": entities.twin.api_key } },
          simulate_entities: { path: "/v1/simulate", method: "POST", body: { input: entityPayment }, headers: { "X-API-Key": entities.tenant.api_key } },
          protect_no_entities: { path: "/v1/protect", method: "POST", body: entityPayment, headers: { "X-API-Key": entities.twin.api_key } },
          protect_entities: { path: "/v1/protect", method: "POST", body: entityPayment, headers: { "X-API-Key": entities.tenant.api_key } },
        }
      : {}),
    protect_execute: { path: "/v1/protect", method: "POST", body: { action: "document.read", resource: "docs/handbook.pdf" }, keys, pair: true },
    key_list: { path: "/customer/keys", method: "GET", headers: { Authorization: `Bearer ${account.token}` } },
    // One caller, one request at a time: the latency a bot sees when warden is not busy.
    simulate_one_caller: { path: "/v1/simulate", method: "POST", body: { preset: "small_payment" }, headers: key, connections: 1 },
    protect_one_caller: { path: "/v1/protect", method: "POST", body: payment, headers: key, connections: 1 },
    // A few callers, each waiting for its answer: what batching costs when no one else is coming.
    protect_four_callers: { path: "/v1/protect", method: "POST", body: payment, keys, connections: 4 },
    // Last, and with 8 connections: bcrypt (cost 12, ~250 ms of CPU each) is slow on purpose, and
    // 64 waiting logins would only measure the queue. Its backlog must not spill into others.
    login: { path: "/auth/login", method: "POST", body: { email: account.email, password }, connections: 8, timeout: "10s" },
  };
}

/** Stores benchEntities() (500 a call) and publishes ENTITY_POLICY for the entity scenarios' tenant, and ENTITY_TWIN_POLICY for their twins'. */
export async function loadEntityTenant(url: string, account: { token: string }, twin: { token: string }): Promise<void> {
  const put = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, { ...insecure, method: "PUT", headers: { "content-type": "application/json", authorization: `Bearer ${account.token}` }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`the entity tenant, PUT ${path}: ${res.status} ${await res.text()}`);
  };
  const all = benchEntities();
  // 500 a call: the API takes 1,000 entities a call, in a body of at most 64 KiB.
  for (let i = 0; i < all.length; i += 500) await put("/customer/entities", { entities: all.slice(i, i + 500) });
  await put("/customer/policy", { document: ENTITY_POLICY });
  const res = await fetch(`${url}/customer/policy`, { ...insecure, method: "PUT", headers: { "content-type": "application/json", authorization: `Bearer ${twin.token}` }, body: JSON.stringify({ document: ENTITY_TWIN_POLICY }) });
  if (!res.ok) throw new Error(`the entity twins' tenant, PUT /customer/policy: ${res.status} ${await res.text()}`);
}
