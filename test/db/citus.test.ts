// On a Citus coordinator (docs/deployment.md, "On Citus"): the schema is laid out as docs/scaling.md
// says, the workers hold every function, and a worker that stops answers 503 with Retry-After to
// the requests that need it, loses nothing, and is used again when it returns, without a restart.
// Elsewhere (one server, the embedded database) the only test here checks that nothing of it ran:
// the others need a cluster by their nature, and CI runs the suite on one (.ci/run).
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createService } from "../../src/app/service.ts";
import { openDb } from "../../src/db/index.ts";
import { createLogger } from "../../src/log.ts";
import { checkReceiptLog } from "../../src/receipts/check.ts";
import { execute, protect } from "../helpers/customer.ts";
import { call, signup, testConfig, testService } from "../helpers/service.ts";
import { testOne, testQuery } from "../helpers/sql.ts";

const { db } = await testService();
const onCitus = (await testOne<{ citus: boolean }>(db, "citus_installed"))?.citus === true;

const TENANT_TABLES = [
  "api_key_expiry_notices", "api_key_rate_buckets", "api_key_usage_daily", "api_keys", "approval_votes", "approvals", "audit_outbox",
  "entities", "entity_heads", "feature_grants", "idempotency_keys", "mcp_gateway_secrets", "mcp_gateways", "member_invitations", "members",
  "oauth_codes", "oauth_grants", "oauth_tokens", "policies", "policy_tests", "receipt_heads", "receipt_tree_nodes",
  "receipts", "tenants", "upgrade_requests", "usage_counters", "usage_daily", "webhook_deliveries", "webhooks",
];
const REFERENCE_TABLES = [
  "accounts", "auth_tokens", "features", "invitation_routes", "key_routes", "mcp_gateway_routes", "member_routes", "mfa_recovery_codes", "mfa_totp",
  "oauth_clients", "plans", "server_secrets", "session_revocations", "signing_keys",
];
const COORDINATOR_TABLES = ["auth_rate_limits", "outbox", "schema_version"];

test("one server or the embedded database: no Citus, and the schema is laid out by nothing but the baseline", async () => {
  if (onCitus) return; // the cluster's own tests below
  expect(await testOne(db, "relation_exists", ["pg_dist_partition"])).toEqual({ relation: null });
});

describe.skipIf(!onCitus)("on a Citus coordinator", () => {
  test("warden migrate distributed every tenant table by tenant_id, co-located with tenants; the rest are reference tables or the coordinator's", async () => {
    const rows = await testQuery<{ table_name: string; kind: string; distribution_column: string | null; colocation_id: number | null; tenants_colocation_id: number }>(db, "citus_tables");
    const byKind = (kind: string) => rows.filter((r) => r.kind === kind).map((r) => r.table_name).sort();
    expect(byKind("distributed")).toEqual(TENANT_TABLES);
    expect(byKind("reference")).toEqual(REFERENCE_TABLES);
    expect(byKind("coordinator")).toEqual(COORDINATOR_TABLES);
    for (const r of rows.filter((r) => r.kind === "distributed")) {
      expect({ table: r.table_name, column: r.distribution_column, colocation: r.colocation_id }).toEqual({ table: r.table_name, column: "tenant_id", colocation: r.tenants_colocation_id });
    }
  });

  test("every function of the schema exists on every worker", async () => {
    const signatures = (await testQuery<{ signature: string }>(db, "citus_public_functions")).map((r) => r.signature);
    expect(signatures.length).toBeGreaterThan(100);
    const missing = await testQuery<{ nodename: string; nodeport: number; result: string }>(db, "citus_functions_missing", [signatures]);
    expect(missing.length).toBe(2);
    for (const node of missing) expect({ node: `${node.nodename}:${node.nodeport}`, missing: node.result }).toEqual({ node: `${node.nodename}:${node.nodeport}`, missing: "" });
  });

  test("the hot paths are single-shard: a key lookup, a protect's and an execute's append, a checkpoint and a proof run no statement over several shards", async () => {
    // A connection on which Citus refuses any statement that would run as several tasks.
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.searchParams.set("citus.multi_task_query_log_level", "error");
    const strict = await openDb({ databaseUrl: url.toString(), dataDir: "memory://", poolSize: 4 });
    const service = await createService(testConfig(), { db: strict, log: createLogger("silent") });
    try {
      const boss = await signup();
      const as = { headers: { authorization: `Bearer ${boss.token}` }, service };
      for (let i = 0; i < 3; i++) {
        const allowed = await protect(boss.apiKey, undefined, { service });
        expect(allowed.status).toBe(200);
        expect((await execute(boss.apiKey, allowed.body.receipt_id, { service })).status).toBe(200);
      }
      const checkpoint = await call("GET", "/customer/receipts/checkpoint", as);
      expect(checkpoint.status).toBe(200);
      const [newest] = (await call("GET", "/customer/receipts?limit=1", as)).body.receipts;
      const proof = await call("GET", `/customer/receipts/${newest.receipt_id}/proof?tree_size=${checkpoint.body.tree_size}`, as);
      expect(proof.status).toBe(200);
    } finally {
      await service.close();
      await strict.close();
    }
  });

  test("a worker stopped: 503 with Retry-After on the requests that need it, nothing half-written; used again once back, without a restart", async () => {
    const boss = await signup();
    expect((await protect(boss.apiKey)).status).toBe(200);
    const node = (await testOne<{ nodename: string; nodeport: number; data_directory: string }>(db, "citus_worker_of_tenant", [boss.tenantId]))!;
    expect(existsSync(node.data_directory)).toBe(true);
    pgCtl(node.data_directory, "stop");
    try {
      const replies = [await protect(boss.apiKey), await protect(boss.apiKey), await call("GET", "/customer/receipts/checkpoint", { headers: { authorization: `Bearer ${boss.token}` } })];
      for (const reply of replies) {
        expect({ status: reply.status, error: reply.body?.error }).toEqual({ status: 503, error: "unavailable" });
        expect(Number(reply.headers.get("retry-after"))).toBeGreaterThan(0);
      }
    } finally {
      pgCtl(node.data_directory, "start");
    }
    // The same service, no restart: the coordinator connects to the worker again.
    let back = await protect(boss.apiKey);
    for (let i = 0; i < 20 && back.status === 503; i++) {
      await Bun.sleep(250);
      back = await protect(boss.apiKey);
    }
    expect(back.status).toBe(200);
    // Signup's key.created event, the protect before and the one after: nothing of the refused ones.
    const check = await checkReceiptLog(db, boss.tenantId);
    expect(check).toMatchObject({ ok: true, receipts: 3, problems: [] });
  }, 60_000);
});

/** Stops or starts a PostgreSQL node by its data directory, as the user who owns it. */
function pgCtl(dataDirectory: string, action: "stop" | "start"): void {
  const bindir = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" }).stdout?.trim() || "/usr/lib/postgresql/15/bin";
  const args = action === "stop" ? ["-D", dataDirectory, "-m", "fast", "-w", "stop"] : ["-D", dataDirectory, "-l", `${dataDirectory}/log`, "-w", "start"];
  const command = [`${bindir}/pg_ctl`, ...args];
  const run = process.getuid?.() === 0 ? spawnSync("su", ["postgres", "-s", "/bin/sh", "-c", command.map((a) => `'${a}'`).join(" ")], { encoding: "utf8" }) : spawnSync(command[0]!, command.slice(1), { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`pg_ctl ${action} failed: ${run.stderr || run.stdout}`);
}
