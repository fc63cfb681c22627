// docs/scaling.md: what would block distributing the tenant tables by tenant_id with Citus (the
// distribution column in every primary key and unique constraint; foreign keys only between
// co-located rows; no trigger that writes another table). The lists are what is left to change; a
// new table, key, foreign key or writing trigger that adds to them fails here, and so does one the
// doc does not name.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { testService } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

/** Tables with a tenant_id column that stay off the tenant shards: the routes that find a tenant, and the outbox. */
const KEPT_OFF_THE_SHARDS = ["invitation_routes", "key_routes", "mcp_gateway_routes", "member_routes", "outbox"];

const LEFT = [
  "accounts.accounts_last_tenant_id_fkey",
  "webhook_deliveries.webhook_deliveries_outbox_id_fkey",
];

/**
 * Triggers that write another table: each writes rows of its own row's tenant in a table
 * co-located with its own (the key-context epoch on tenants), which a worker writes locally. None
 * on a reference table, and none writes for every tenant.
 */
const TRIGGER_WRITERS = [
  "api_keys.api_keys_key_context -> tenants",
  "entity_heads.entity_heads_key_context -> tenants",
  "feature_grants.feature_grants_key_context -> tenants",
  "policies.policies_key_context -> tenants",
];

test("the triggers that write another table are exactly those docs/scaling.md lists (the routes are written by procedures)", async () => {
  const { db } = await testService();
  const rows = await testQuery<{ table_name: string; trigger_name: string; writes: string }>(db, "trigger_writers");
  expect(rows.map((r) => `${r.table_name}.${r.trigger_name} -> ${r.writes}`)).toEqual(TRIGGER_WRITERS);
});

test("what would block distribution by tenant_id is exactly what docs/scaling.md lists as left", async () => {
  const { db } = await testService();
  const rows = await testQuery<{ table_name: string; constraint_name: string }>(db, "distribution_blockers", [KEPT_OFF_THE_SHARDS]);
  // On a cluster the migration laid the tables out and left those keys out (sql/citus/distribute.sql).
  const citus = (await db.one("migrations/citus"))?.citus;
  expect(rows.map((r) => `${r.table_name}.${r.constraint_name}`)).toEqual(citus ? [] : LEFT);
});

test("docs/scaling.md names every table kept off the shards and every blocker left", () => {
  const doc = readFileSync(join(import.meta.dir, "../../docs/scaling.md"), "utf8");
  const triggers = TRIGGER_WRITERS.map((w) => w.split(" ")[0]!.split(".")[1]!);
  for (const name of [...KEPT_OFF_THE_SHARDS, ...LEFT.map((l) => l.split(".")[1]!), ...triggers]) expect(doc).toContain(`\`${name}\``);
});
