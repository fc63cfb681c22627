// The policy impact replay: one tenant's latest 10,000 protect receipts decided again under a draft
// (POST /customer/policy/impact, limit 10,000). One request, timed end to end, several rounds; the
// budget is 2 s. A scenario of `npm run bench` (BENCH_ONLY=policy_impact), or alone:
//
//   bun scripts/bench/impact.ts                        # embedded database, data directory on disk
//   DATABASE_URL=postgres://... bun scripts/bench/impact.ts
//
// IMPACT_RECEIPTS (10000), IMPACT_ROUNDS (5, after one warm-up).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PRESETS, presetNames } from "../../src/simulation/presets.ts";
import { insecure, type Account, startWithTenants, stopService } from "./service.ts";

export interface ImpactResult {
  receipts: number;
  rounds: number;
  p50_ms: number;
  max_ms: number;
  evaluated: number;
  changed: number;
}

// A draft that changes some decisions: payments need an approved ticket in their context.
const DRAFT = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "pay-with-ticket", effect: "allow", reason: "ticket_approved", when: { actions: ["payment.*"], amount: { lte: 1000 }, context: { ticket: { prefix: "TKT-" } } } },
    { id: "reads", effect: "allow", reason: "read_only", when: { actions: ["document.read"] } },
    { id: "staging", effect: "allow", reason: "staging_deploy", when: { actions: ["deploy"], resources: ["staging/*"] } },
  ],
};

/** Stores `count` protect receipts for the account (the presets' inputs in turn), 32 in flight. */
async function fill(url: string, account: Account, count: number): Promise<void> {
  const inputs = presetNames().map((n) => PRESETS[n].input);
  let next = 0;
  const headers = { "content-type": "application/json", "x-api-key": account.api_key };
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < count) {
        const n = next++;
        const res = await fetch(`${url}/v1/protect`, { ...insecure, method: "POST", headers, body: JSON.stringify(inputs[n % inputs.length]) });
        if (res.status !== 200) throw new Error(`protect: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
}

export async function policyImpact(url: string, account: Account, opts: { receipts?: number; rounds?: number } = {}): Promise<ImpactResult> {
  const receipts = opts.receipts ?? Number(process.env.IMPACT_RECEIPTS ?? 10_000);
  const rounds = opts.rounds ?? Number(process.env.IMPACT_ROUNDS ?? 5);
  await fill(url, account, receipts);
  const once = async () => {
    const started = performance.now();
    const res = await fetch(`${url}/customer/policy/impact`, {
      ...insecure,
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${account.token}` },
      body: JSON.stringify({ document: DRAFT, limit: receipts }),
    });
    const body = (await res.json()) as { evaluated: number; changed: number };
    if (res.status !== 200 || body.evaluated !== receipts) throw new Error(`impact: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    return { ms: performance.now() - started, body };
  };
  await once(); // warm-up, not counted
  const times: number[] = [];
  let last = { evaluated: 0, changed: 0 };
  for (let i = 0; i < rounds; i++) {
    const r = await once();
    times.push(r.ms);
    last = r.body;
  }
  times.sort((a, b) => a - b);
  const round1 = (ms: number) => Math.round(ms * 10) / 10;
  return { receipts, rounds, p50_ms: round1(times[Math.floor(times.length / 2)]), max_ms: round1(times[times.length - 1]), evaluated: last.evaluated, changed: last.changed };
}

if (import.meta.main) {
  const root = join(import.meta.dir, "..", "..");
  const dataDir = mkdtempSync(join(tmpdir(), "warden-impact-"));
  const env = { DATABASE_URL: process.env.DATABASE_URL ?? "", DATA_DIR: dataDir, LOG_LEVEL: "warn", BCRYPT_COST: "4" };
  const { service, accounts } = await startWithTenants(root, env, { tenants: 1, name: "impact" });
  try {
    const r = await policyImpact(service.url, accounts[0]);
    console.log(`impact (${process.env.DATABASE_URL ? "postgres" : "embedded"}): ${r.evaluated} receipts decided again in p50 ${r.p50_ms} ms, max ${r.max_ms} ms over ${r.rounds} rounds; ${r.changed} changed`);
  } finally {
    await stopService(service);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
