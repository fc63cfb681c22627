// npm run bench:waiters: do agents waiting on approvals slow everyone else? One service, one
// tenant whose policy holds refunds for approval; N agents (BENCH_WAITERS_COUNT, default 1,000)
// each hold GET /v1/approvals/{id}?wait=30 open on its own connection, while simulate and protect
// are offered at a fixed rate (half of what the same service answered at saturation, measured
// first). Rounds alternate without and with the waiters; the table gives each scenario's p99 both
// ways and their ratio (the goal: at most 1.5x). A script of its own (not a section of
// `npm run bench`): it needs a quiet machine and about two minutes.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixedRate } from "./fixed-rate.ts";
import { insecure, startWithTenants, stopService, toolDatabase } from "./service.ts";
import { ensureWrk, wrk } from "./wrk.ts";
import { scenarios } from "./scenarios.ts";

const ROOT = join(import.meta.dir, "..", "..");
const WAITERS = Number(process.env.BENCH_WAITERS_COUNT ?? 1000);
const ROUNDS = Number(process.env.BENCH_WAITERS_ROUNDS ?? 2);
const SECONDS = Number(process.env.BENCH_WAITERS_SECONDS ?? 8);

export interface WaitersResult {
  waiters: number;
  rows: { scenario: string; offered_rps: number; p99_without_ms: number; p99_with_ms: number; ratio: number; errors_with: number }[];
  waiters_answered_early: number;
}

const HELD = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "held", effect: "require_approval", reason: "held_for_people", when: { actions: ["refund.issue"] }, approval: { expires_in: 3600 } },
    { id: "pay", effect: "allow", reason: "ok", when: { actions: ["payment.send"] } },
  ],
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function runWaiters(): Promise<WaitersResult> {
  ensureWrk();
  const dataDir = mkdtempSync(join(tmpdir(), "warden-waiters-"));
  const database = await toolDatabase("warden_bench_waiters");
  const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: "warn", ...(database.url ? { DATABASE_URL: database.url } : {}) };
  const { service, accounts } = await startWithTenants(ROOT, env, { tenants: 1, name: "waiters" });
  try {
    const account = accounts[0];
    const put = await fetch(`${service.url}/customer/policy`, { ...insecure, method: "PUT", headers: { "content-type": "application/json", authorization: `Bearer ${account.token}` }, body: JSON.stringify({ document: HELD }) });
    if (!put.ok) throw new Error(`policy: ${put.status} ${await put.text()}`);
    const asked = (await (await fetch(`${service.url}/v1/protect`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": account.api_key }, body: JSON.stringify({ action: "refund.issue" }) })).json()) as { approval: { approval_id: string } };
    const approvalId = asked.approval.approval_id;
    const shapes = scenarios(accounts, "unused");
    const measured = { simulate: shapes.simulate, protect: shapes.protect_one_tenant };
    // Saturation first, for the offered rate.
    const rates: Record<string, number> = {};
    for (const [name, shape] of Object.entries(measured)) {
      const r = await wrk(service.url, shape, { seconds: 5, connections: 32, threads: 2 });
      rates[name] = Math.max(50, Math.round((r.requests / (r.duration_us / 1e6)) * 0.5));
    }

    let answeredEarly = 0;
    const holdWaiters = () => {
      const controller = new AbortController();
      const all = Array.from({ length: WAITERS }, () =>
        fetch(`${service.url}/v1/approvals/${approvalId}?wait=30`, { ...insecure, headers: { "x-api-key": account.api_key }, signal: controller.signal, keepalive: false })
          .then(async (r) => {
            await r.arrayBuffer();
            answeredEarly++;
          })
          .catch(() => undefined),
      );
      return { stop: async () => (controller.abort(), await Promise.all(all)) };
    };

    const samples: Record<string, { without: number[]; with: number[]; errors: number }> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, shape] of Object.entries(measured)) {
        const s = (samples[name] ??= { without: [], with: [], errors: 0 });
        s.without.push((await fixedRate(service.url, shape, { rate: rates[name], seconds: SECONDS, warmup: 1 })).p99_ms);
        const held = holdWaiters();
        await Bun.sleep(1500);
        const r = await fixedRate(service.url, shape, { rate: rates[name], seconds: SECONDS, warmup: 1 });
        s.with.push(r.p99_ms);
        s.errors += r.errors;
        await held.stop();
      }
    }
    const rows = Object.entries(samples).map(([scenario, s]) => {
      const without = median(s.without);
      const withW = median(s.with);
      return { scenario, offered_rps: rates[scenario], p99_without_ms: without, p99_with_ms: withW, ratio: Math.round((withW / without) * 100) / 100, errors_with: s.errors };
    });
    return { waiters: WAITERS, rows, waiters_answered_early: answeredEarly };
  } finally {
    await stopService(service);
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function waitersTable(r: WaitersResult): string {
  return [
    `### ${r.waiters} agents waiting on an approval`,
    "",
    `Each waiter holds \`GET /v1/approvals/{id}?wait=30\` open on its own connection while the scenario is offered at half its saturation rate (medians of ${ROUNDS} alternating rounds; goal: p99 at most 1.5x). Waiters answered before their 30 s (should be 0): ${r.waiters_answered_early}.`,
    "",
    "| scenario | offered req/s | p99 without ms | p99 with waiters ms | ratio | errors with |",
    "|---|---:|---:|---:|---:|---:|",
    ...r.rows.map((x) => `| ${x.scenario} | ${x.offered_rps} | ${x.p99_without_ms} | ${x.p99_with_ms} | ${x.ratio} | ${x.errors_with} |`),
    "",
  ].join("\n");
}

if (import.meta.main) {
  const result = await runWaiters();
  const table = waitersTable(result);
  console.log(table);
  const dir = join(ROOT, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
  writeFileSync(join(dir, `waiters-${stamp}.json`), JSON.stringify(result, null, 2));
  writeFileSync(join(dir, `waiters-${stamp}.md`), table);
}
