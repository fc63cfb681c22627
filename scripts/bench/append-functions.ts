// Where a receipt_append() call's time goes, by function: the appends of scripts/bench/append.ts
// (one receipt a call, 16 tenants) with track_functions = 'all', then each function's calls, total
// and self time per append call from pg_stat_user_functions, largest self time first. Statements
// a function runs count in its self time; a trigger function's at commit too.
//
//   bun scripts/bench/append-functions.ts                 # embedded database, in memory
//   DATABASE_URL=postgres://... bun scripts/bench/append-functions.ts
//
// APPEND_ROUNDS (500).
import { openDb, type QueryParams } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { appendItems, appendTenants, PER_TENANT_LIMIT, TENANTS } from "./append-items.ts";

const ROUNDS = Number(process.env.APPEND_ROUNDS ?? 500);
if ((ROUNDS + 50) / TENANTS >= PER_TENANT_LIMIT) throw new Error("fewer rounds: a free tenant stores 1,000 receipts");
const db = await openDb({ databaseUrl: process.env.DATABASE_URL || undefined, dataDir: "memory://", poolSize: 1 });
await migrate(db);
const raw = (text: string) => db.runScriptStatement("append-functions", text, []);

const tenants = await appendTenants(db);
let calls = 0;
// One receipt a call, each call the next tenant's.
const append = async () => {
  const rows = await db.query("receipts/append", [appendItems(tenants, 1, calls++)] as QueryParams<"receipts/append">);
  if (rows.some((r) => r.refusal)) throw new Error("refused");
};
for (let i = 0; i < 40; i++) await append();
await raw("SET track_functions = 'all'");
await raw("SELECT pg_stat_reset()");
const t0 = performance.now();
for (let i = 0; i < ROUNDS; i++) await append();
const ms = (performance.now() - t0) / ROUNDS;
await raw("SELECT pg_stat_force_next_flush()");
await raw("SELECT 1");
const rows = await raw(
  "SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions ORDER BY self_time DESC",
);
console.log(`${db.kind}: ${ROUNDS} calls, ${ms.toFixed(3)} ms a call (wall, with track_functions)`);
console.log("| function | calls a call | total µs a call | self µs a call |\n|---|---:|---:|---:|");
for (const r of rows as { funcname: string; calls: number; total_time: number; self_time: number }[]) {
  console.log(`| ${r.funcname} | ${(Number(r.calls) / ROUNDS).toFixed(2)} | ${((Number(r.total_time) * 1000) / ROUNDS).toFixed(0)} | ${((Number(r.self_time) * 1000) / ROUNDS).toFixed(0)} |`);
}
await db.close();
