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
import { newId } from "../../src/ids.ts";
import { hashSecret, newSecret, secretHint } from "../../src/keys/secret.ts";
import { canonicalJson } from "../../src/crypto/canonical.ts";
import { sha256HexSync } from "../../src/crypto/sync.ts";

const ROUNDS = Number(process.env.APPEND_ROUNDS ?? 40);
const SIZES = (process.env.APPEND_SIZES ?? "1,8,32,128").split(",").map(Number);
const TENANTS = 16;
// A free tenant stores 1,000 receipts and counts 1,000 protects a day: stay below both.
const perTenant = Math.ceil(((ROUNDS + 5) * SIZES.reduce((a, b) => a + b, 0)) / TENANTS);
if (perTenant >= 1000) throw new Error(`${perTenant} receipts per tenant would pass the free plan's limits: fewer rounds or smaller sizes`);

const dir = process.env.DATABASE_URL || process.env.APPEND_MEMORY ? undefined : mkdtempSync(join(tmpdir(), "warden-append-"));
const db = await openDb({ databaseUrl: process.env.DATABASE_URL || undefined, dataDir: dir ?? "memory://", poolSize: 4 });
await migrate(db);

const tenants: { tenantId: string; keyId: string }[] = [];
for (let i = 0; i < TENANTS; i++) {
  const secret = newSecret();
  const t = { tenantId: newId("cust_"), keyId: newId("key_") };
  await db.query("accounts/signup", [t.tenantId, newId("acct_"), newId("mbr_"), `append.${Date.now()}.${i}@example.com`, "$2b$04$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234", t.keyId, await hashSecret(secret), secretHint(secret)]);
  tenants.push(t);
}

let n = 0;
function item(t: (typeof tenants)[number]) {
  n++;
  const payload = canonicalJson({ v: 2, kind: "protect", input: { action: "document.read", resource: `docs/${n}` }, policy: { policy_id: "pol_default", version: 1, hash: "0x" + "ab".repeat(32) }, decision: "ALLOWED", reasons: ["read_only"], rule: "allow_document_read" });
  return {
    receipt_id: newId("rcpt_"), tenant_id: t.tenantId, key_id: t.keyId, kind: "protect", request_id: newId("req_"),
    timestamp: new Date().toISOString(), decision: "ALLOWED", payload, content_hash: sha256HexSync(payload),
    signature: "eyJhbGciOiJFZERTQSJ9." + "x".repeat(250) + "." + "y".repeat(86), protect_receipt_id: null,
  };
}

// The items are made before the clock starts: the time is the append's alone.
const items = (size: number) => Array.from({ length: size }, (_, i) => item(tenants[i % TENANTS]));
const append = async (batch: ReturnType<typeof item>[]) => {
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
