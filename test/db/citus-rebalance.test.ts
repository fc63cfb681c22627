// Growing a Citus cluster while it serves loses nothing (docs/deployment.md, "On Citus"): a third
// worker joins and the shards are rebalanced onto it while two instances answer protects; then
// every tenant's chain and Merkle log verify, no protect got a 5xx, and the daily quota and a
// budget counted exactly what was allowed. At the end the worker is drained and removed, so the
// tests after this one find the cluster as it was. Needs a cluster by its nature: on one server or
// the embedded database it does not run (CI runs the suite on a cluster too, .ci/run).
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkReceiptLog } from "../../src/receipts/check.ts";
import { bearer } from "../helpers/accounts.ts";
import { protect, setPlan } from "../helpers/customer.ts";
import { call, secondInstance, signup, testService, type Reply } from "../helpers/service.ts";
import { testOne, testQuery } from "../helpers/sql.ts";

const { db } = await testService();
const onCitus = (await testOne<{ citus: boolean }>(db, "citus_installed"))?.citus === true;

const BUDGETED = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "budget", effect: "deny", reason: "daily_budget", when: { actions: ["payment.*"], currency: { eq: "USD" }, usage: { sum: "amount", per: "tenant", window: "day", gt: 3000 } } },
    { id: "payments", effect: "allow", reason: "ok", when: { actions: ["payment.*"] } },
  ],
};

describe.skipIf(!onCitus)("on a Citus coordinator", () => {
  test("a third worker joins and the shards move onto it while two instances serve protects: nothing lost, nothing counted twice", async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    const port = Number(url.port) + 3;
    const name = url.pathname.slice(1);
    const node = startNode(port, name);
    const second = await secondInstance();
    let added = false;
    try {
      const tenants = await Promise.all(Array.from({ length: 6 }, async () => {
        const t = await signup();
        await setPlan(t.tenantId, "pro");
        expect((await call("PUT", "/customer/policy", { json: { document: BUDGETED }, headers: bearer(t.token) })).status).toBe(200);
        return t;
      }));
      await testQuery(db, "citus_node_add", ["127.0.0.1", port]);
      added = true;

      let moving = true;
      const replies: { tenant: number; reply: Reply }[] = [];
      const load = (async () => {
        for (let round = 0; moving || round < 3; round++) {
          await Promise.all(tenants.map(async (t, i) => {
            const service = i % 2 === 0 ? undefined : second.service;
            replies.push({ tenant: i, reply: await protect(t.apiKey, { action: "payment.send", resource: "vendor/acme", amount: 100, currency: "USD" }, { service }) });
          }));
        }
      })();
      await testQuery(db, "citus_rebalance");
      moving = false;
      await load;

      const placed = await testQuery<{ shards: number }>(db, "citus_shards_on_node", ["127.0.0.1", port]);
      expect(placed[0]!.shards).toBeGreaterThan(0);
      expect(replies.filter((r) => r.reply.status >= 500).map((r) => `${r.reply.status} ${r.reply.text}`)).toEqual([]);
      for (const [i, t] of tenants.entries()) {
        const mine = replies.filter((r) => r.tenant === i).map((r) => r.reply);
        const allowed = mine.filter((r) => r.body.decision === "ALLOWED").length;
        // 30 protects of 100 fit the budget of 3,000; the rest are refused by it.
        expect(allowed).toBe(Math.min(mine.length, 30));
        const usage = (await call("GET", "/customer/dashboard", { headers: bearer(t.token) })).body.usage;
        expect(usage.protect_today).toBe(mine.length);
        const limits = (await call("GET", "/customer/usage", { headers: bearer(t.token) })).body.limits;
        expect(limits[0].usage).toEqual([{ key_id: null, total: allowed * 100 }]);
        expect(await checkReceiptLog(db, t.tenantId)).toMatchObject({ ok: true, problems: [] });
      }
    } finally {
      try {
        await second.close();
        if (added) {
          await testQuery(db, "citus_node_drain", ["127.0.0.1", port]);
          await testQuery(db, "citus_node_remove", ["127.0.0.1", port]);
        }
      } finally {
        node.stop();
      }
    }
  }, 240_000);
});

/** A new PostgreSQL node with Citus on `port`, holding an empty database `name` with the extension. */
function startNode(port: number, name: string): { stop(): void } {
  const dir = mkdtempSync(join(tmpdir(), "warden-citus-worker-"));
  const data = join(dir, "data");
  const bindir = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" }).stdout?.trim() || "/usr/lib/postgresql/15/bin";
  const asOwner = (command: string) => {
    const run = process.getuid?.() === 0 ? spawnSync("su", ["postgres", "-s", "/bin/sh", "-c", command], { encoding: "utf8" }) : spawnSync("sh", ["-c", command], { encoding: "utf8" });
    if (run.status !== 0) throw new Error(`${command}: ${run.stderr || run.stdout}`);
  };
  if (process.getuid?.() === 0) spawnSync("chown", ["postgres:", dir]);
  asOwner(`${bindir}/initdb -D ${data} -U postgres -A trust >/dev/null`);
  asOwner(
    `printf "%s\\n" "shared_preload_libraries = 'citus'" "port = ${port}" "listen_addresses = '127.0.0.1'" "unix_socket_directories = '${dir}'" ` +
      `"max_prepared_transactions = 200" "fsync = off" "synchronous_commit = off" >> ${data}/postgresql.conf`,
  );
  asOwner(`${bindir}/pg_ctl -D ${data} -l ${dir}/log -w start >/dev/null`);
  asOwner(`psql -qX -h 127.0.0.1 -p ${port} -U postgres -d postgres -c "CREATE DATABASE ${name}" -c "\\c ${name}" -c "CREATE EXTENSION citus"`);
  return {
    stop() {
      const stop = `${bindir}/pg_ctl -D ${data} -m immediate -w stop`;
      if (process.getuid?.() === 0) spawnSync("su", ["postgres", "-s", "/bin/sh", "-c", stop]);
      else spawnSync("sh", ["-c", stop]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
