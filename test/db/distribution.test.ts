// docs/scaling.md: what would block distributing the tenant tables by tenant_id with Citus (the
// distribution column in every primary key and unique constraint; foreign keys only between
// co-located rows). The list is what is left to change; a new table, key or foreign key that adds
// to it fails here, and so does one the doc does not name.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { testService } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

/** Tables with a tenant_id column that stay off the tenant shards: the routes that find a tenant, and the outbox. */
const KEPT_OFF_THE_SHARDS = ["invitation_routes", "key_routes", "member_routes", "outbox"];

const LEFT = [
  "accounts.accounts_last_tenant_id_fkey",
  "outbox.outbox_tenant_id_fkey",
  "webhook_deliveries.webhook_deliveries_outbox_id_fkey",
];

test("what would block distribution by tenant_id is exactly what docs/scaling.md lists as left", async () => {
  const { db } = await testService();
  const rows = await testQuery<{ table_name: string; constraint_name: string }>(db, "distribution_blockers", [KEPT_OFF_THE_SHARDS]);
  expect(rows.map((r) => `${r.table_name}.${r.constraint_name}`)).toEqual(LEFT);
});

test("docs/scaling.md names every table kept off the shards and every blocker left", () => {
  const doc = readFileSync(join(import.meta.dir, "../../docs/scaling.md"), "utf8");
  for (const name of [...KEPT_OFF_THE_SHARDS, ...LEFT.map((l) => l.split(".")[1]!)]) expect(doc).toContain(`\`${name}\``);
});
