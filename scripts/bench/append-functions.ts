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
import { newId } from "../../src/ids.ts";
import { hashSecret, newSecret, secretHint } from "../../src/keys/secret.ts";
import { canonicalJson } from "../../src/crypto/canonical.ts";
import { sha256HexSync } from "../../src/crypto/sync.ts";

const ROUNDS = Number(process.env.APPEND_ROUNDS ?? 500);
const TENANTS = 16;
if ((ROUNDS + 50) / TENANTS >= 1000) throw new Error("fewer rounds: a free tenant stores 1,000 receipts");
const db = await openDb({ databaseUrl: process.env.DATABASE_URL || undefined, dataDir: "memory://", poolSize: 1 });
await migrate(db);
const raw = (text: string) => db.runScriptStatement("append-functions", text, []);

const tenants: { tenantId: string; keyId: string }[] = [];
for (let i = 0; i < TENANTS; i++) {
  const secret = newSecret();
  const t = { tenantId: newId("cust_"), keyId: newId("key_") };
  await db.query("accounts/signup", [t.tenantId, newId("acct_"), newId("mbr_"), `append.${Date.now()}.${i}@example.com`, "$2b$04$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234", t.keyId, await hashSecret(secret), secretHint(secret)]);
  tenants.push(t);
}
let n = 0;
function item() {
  const t = tenants[n++ % TENANTS]!;
  const payload = canonicalJson({ v: 2, kind: "protect", input: { action: "document.read", resource: `docs/${n}` }, policy: { policy_id: "pol_default", version: 1, hash: "0x" + "ab".repeat(32) }, decision: "ALLOWED", reasons: ["read_only"], rule: "allow_document_read" });
  return {
    receipt_id: newId("rcpt_"), tenant_id: t.tenantId, key_id: t.keyId, kind: "protect", request_id: newId("req_"),
    timestamp: new Date().toISOString(), decision: "ALLOWED", payload, content_hash: sha256HexSync(payload),
    signature: "eyJhbGciOiJFZERTQSJ9." + "x".repeat(250) + "." + "y".repeat(86), protect_receipt_id: null,
  };
}
const append = async () => {
  const rows = await db.query("receipts/append", [[item()]] as QueryParams<"receipts/append">);
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
