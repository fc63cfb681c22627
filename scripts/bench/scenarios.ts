// The request shapes of the bench's scenarios, for tenants set up by scripts/bench/service.ts:
// one table for bench.ts, ab.ts and the one-scenario tools (profile, threads, rss).
import type { Account } from "./service.ts";
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

export function scenarios(accounts: Account[], password: string, budget?: Account): Record<string, Shape> {
  const account = accounts[0];
  const key = { "X-API-Key": account.api_key };
  // Many tenants, as in service: each request takes the next tenant's key (round robin).
  const keys = accounts.map((a) => `${a.tenant_id}=${a.api_key}`);
  const payment = { action: "payment.send", resource: "vendor/acme", amount: 120, currency: "USD" };
  return {
    simulate: { path: "/v1/simulate", method: "POST", body: { preset: "small_payment" }, headers: key },
    protect: { path: "/v1/protect", method: "POST", body: payment, keys },
    protect_one_tenant: { path: "/v1/protect", method: "POST", body: payment, headers: key },
    // One tenant whose policy holds a per-key daily budget (BUDGET_POLICY): beside protect_one_tenant.
    ...(budget ? { protect_budget: { path: "/v1/protect", method: "POST", body: payment, headers: { "X-API-Key": budget.api_key } } } : {}),
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
