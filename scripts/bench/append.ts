// The database side of protect alone: batches of receipts through receipt_append() (one call per
// batch, as the group commit sends them), without HTTP, TLS or signing, so that a change to the
// append can be measured
// without the noise of a whole service under wrk. Batches of 1, 8, 32 and 128 receipts spread over
// 16 tenants (free plan), each batch awaited before the next.
//
//   bun scripts/bench/append.ts                      # embedded database, data directory on disk
//   DATABASE_URL=postgres://... bun scripts/bench/append.ts
//
// APPEND_ROUNDS (40 per batch size), APPEND_SIZES (1,8,32,128). Prints ms per batch and us per receipt.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb, type QueryParams } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { appendItems, appendTenants, PER_TENANT_LIMIT, TENANTS } from "./append-items.ts";

const ROUNDS = Number(process.env.APPEND_ROUNDS ?? 40);
const SIZES = (process.env.APPEND_SIZES ?? "1,8,32,128").split(",").map(Number);
// Stay below a free tenant's limits.
const perTenant = Math.ceil(((ROUNDS + 5) * SIZES.reduce((a, b) => a + b, 0)) / TENANTS);
if (perTenant >= PER_TENANT_LIMIT) throw new Error(`${perTenant} receipts per tenant would pass the free plan's limits: fewer rounds or smaller sizes`);

const dir = process.env.DATABASE_URL || process.env.APPEND_MEMORY ? undefined : mkdtempSync(join(tmpdir(), "warden-append-"));
const db = await openDb({ databaseUrl: process.env.DATABASE_URL || undefined, dataDir: dir ?? "memory://", poolSize: 4 });
await migrate(db);

const tenants = await appendTenants(db);

// The items are made before the clock starts: the time is the append's alone.
const items = (size: number) => appendItems(tenants, size);
const append = async (batch: ReturnType<typeof items>) => {
  const rows = await db.query("receipts/append", [batch] as QueryParams<"receipts/append">);
  const refused = rows.find((r) => r.refusal);
  if (refused) throw new Error(`receipt_append refused an item: ${refused.refusal}`);
};

console.log(`database: ${db.kind}${dir ? " (data directory on disk)" : ""}; ${ROUNDS} batches per size`);
// CPU time (the process's, every thread: the embedded database runs in one of its own) changes less
// than the clock when other work shares the machine.
console.log("| receipts per batch | ms per batch (median) | us per receipt | CPU ms per batch (mean) |");
console.log("|---:|---:|---:|---:|");
for (const size of SIZES) {
  for (let i = 0; i < 5; i++) await append(items(size));
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < ROUNDS; i++) {
    const batch = items(size);
    const t0 = performance.now();
    await append(batch);
    times.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  console.log(`| ${size} | ${median.toFixed(2)} | ${((median * 1000) / size).toFixed(0)} | ${((cpu.user + cpu.system) / 1000 / ROUNDS).toFixed(2)} |`);
}
await db.close();
if (dir) rmSync(dir, { recursive: true, force: true });
