// Plans that hold as a log grows (docs/performance.md, "Plans and a growing log"): PL/pgSQL keeps
// the plans of a session's statements, and the service's statements are prepared once per
// connection, so a plan made while the tables were empty (a new database) serves that connection
// for its life. On a new database of its own and one session, as the service's append lane has:
// the hot statements run first on empty tables, then 1,000 more tenants sign up and a tenant's log
// grows through receipt_append() in that same session, and every statement, the growing batches
// included, must read O(1) or O(log N) rows through the plans it kept, as the database's own
// counters count them (pg_stat_user_indexes, pg_stat_user_tables).
import { expect, test } from "bun:test";
import type { Db } from "../../src/db/index.ts";
import { migrate } from "../../src/db/migrate.ts";
import { canonicalJson } from "../../src/crypto/canonical.ts";
import { sha256HexSync } from "../../src/crypto/sync.ts";
import { newId } from "../../src/ids.ts";
import { openScratchDb, planSetAsApproved, sqlTenant, testQuery } from "../helpers/sql.ts";

const FILL_BATCH = 500;
/** Tenants signed up after the plans were made, each with a key whose rate bucket and daily count exist. */
const MORE_TENANTS = 1_000;
/** What one statement of one item may read: a few index probes per table it touches, a fold of 16 receipts, O(log N) tree nodes. */
const ROWS_PER_STATEMENT = 100;
/** What a batch may read per item (its probes) besides ROWS_PER_STATEMENT. */
const ROWS_PER_ITEM = 20;

type Item = Record<string, unknown> & { receipt_id: string };
type Read = { total: number; by: Record<string, number> };

/** A failure names the statement, how many rows it read and where. */
function expectAtMost(what: string, read: Read, most: number): void {
  expect({ what, rows: read.total <= most ? `at most ${most}` : read.total, by: read.by }).toEqual({ what, rows: `at most ${most}`, by: read.by });
}

/** A log of logSize receipts grown on one session whose plans were made on empty tables (after an ANALYZE of them with analyzed). */
async function growAndCheck(opts: { logSize: number; analyzed: boolean }): Promise<void> {
  // One session: on a server a pool of one connection, embedded the database itself.
  const { db, close } = await openScratchDb({ poolSize: 1 });
  try {
    await migrate(db);
    const tenant = await sqlTenant(db, "plans");
    await planSetAsApproved(db, tenant.tenantId, "enterprise");
    await checkOn(db, tenant, opts);
  } finally {
    await close();
  }
}

async function checkOn(db: Db, tenant: { tenantId: string; keyId: string; secretHash: string }, opts: { logSize: number; analyzed: boolean }): Promise<void> {
  let n = 0;
  /** A decision of the tenant as the service appends it (its signature's shape only: nothing here verifies it). */
  const item = (kind: "protect" | "execute" = "protect", protectId: string | null = null): Item => {
    const payload = canonicalJson({ decision: "ALLOWED", n: n++ });
    return {
      receipt_id: newId("rcpt_"), tenant_id: tenant.tenantId, key_id: tenant.keyId, kind, request_id: newId("req_"),
      timestamp: new Date().toISOString(), decision: "ALLOWED", payload, content_hash: sha256HexSync(payload), signature: "aaa.bbb.ccc",
      protect_receipt_id: protectId, approval: null, usage: null,
    };
  };
  const append = async (items: Item[]) => {
    const rows = await db.query("receipts/append", [items]);
    expect(rows.filter((r) => r.refusal !== null)).toEqual([]);
  };
  /** Rows read, per index and table, while fn runs (the counters' difference). */
  const rowsRead = async (fn: () => Promise<unknown>): Promise<Read> => {
    const counters = async () => {
      await testQuery(db, "stats_flush");
      return new Map((await testQuery<{ source: string; n: number }>(db, "rows_read")).map((r) => [r.source, Number(r.n)]));
    };
    const before = await counters();
    await fn();
    const after = await counters();
    const by: Record<string, number> = {};
    let total = 0;
    for (const [source, count] of after) {
      const read = count - (before.get(source) ?? 0);
      if (read > 0) by[source] = read;
      total += read;
    }
    return { total, by };
  };

  let last = "";
  const one = { rows: ROWS_PER_STATEMENT };
  // The hot statements, each as the service runs it; `last` is a stored protect receipt of the tenant.
  const statements: Record<string, { rows: number; run: () => Promise<unknown> }> = {
    // First, from a log of a multiple of 32: two level-4 nodes folded from their receipts and a level-5 node stored.
    "receipts/append: a batch completing subtrees": { rows: ROWS_PER_STATEMENT + 32 * ROWS_PER_ITEM, run: () => append(Array.from({ length: 32 }, () => item())) },
    "receipts/append: a protect": { ...one, run: () => append([item()]) },
    "receipts/append: an execute": { ...one, run: async () => {
      const p = item();
      await append([p]);
      await append([item("execute", p.receipt_id)]);
    } },
    // A key-authenticated request's reads and writes before its decision.
    "keys/authenticate": { ...one, run: () => db.query("keys/authenticate", [[tenant.secretHash]]) },
    "keys/epochs": { ...one, run: () => db.query("keys/epochs", [[tenant.tenantId]]) },
    "keys/rate_take": { ...one, run: () => db.query("keys/rate_take", [tenant.tenantId, tenant.keyId, 1_000_000, 1_000_000]) },
    "keys/protect_take": { ...one, run: () => db.query("keys/protect_take", [tenant.tenantId, tenant.keyId, 1_000_000_000]) },
    "receipts/get": { ...one, run: () => db.one("receipts/get", [tenant.tenantId, last]) },
    "receipts/leaf": { ...one, run: () => db.one("receipts/leaf", [tenant.tenantId, last]) },
    "receipts/head": { ...one, run: () => db.one("receipts/head", [tenant.tenantId]) },
    "receipts/tree_head": { ...one, run: () => db.one("receipts/tree_head", [tenant.tenantId]) },
    "receipts/list": { ...one, run: () => db.query("receipts/list", [tenant.tenantId, null, 50]) },
    // A level-0 tile of the log's first 256 leaves, and a page of the export.
    "receipts/tile_leaves": { rows: ROWS_PER_STATEMENT + 256, run: () => db.one("receipts/tile_leaves", [tenant.tenantId, 0, 256]) },
    "receipts/range": { rows: ROWS_PER_STATEMENT + 256, run: () => db.query("receipts/range", [tenant.tenantId, 0, 256, 256]) },
  };

  // Each statement more than five times while the log is nearly empty: PL/pgSQL and prepared
  // statements settle on a generic plan after five executions. An ANALYZE after the first round
  // makes every plan again, on statistics of the nearly empty tables.
  for (let round = 0; round < 6; round++) {
    if (opts.analyzed && round === 1) await testQuery(db, "analyze");
    const p = item();
    await append([p]);
    last = p.receipt_id;
    for (const s of Object.values(statements)) await s.run();
  }

  for (let i = 0; i < MORE_TENANTS; i++) {
    const t = await sqlTenant(db, "plans");
    await db.query("keys/rate_take", [t.tenantId, t.keyId, 1_000_000, 1_000_000]);
    await db.query("keys/protect_take", [t.tenantId, t.keyId, 1_000_000_000]);
  }
  // The log grows in this session, through the same plans: no batch may read more than its probes.
  let size = Number((await db.one("receipts/head", [tenant.tenantId]))!.tree_size);
  let previous: string[] = [];
  while (size < opts.logSize) {
    const count = Math.min(FILL_BATCH, opts.logSize - size);
    // A tenth of the batch executes protects of the batch before, so both kinds fill the log.
    const executes = previous.slice(0, Math.floor(count / 10)).map((id) => item("execute", id));
    const protects = Array.from({ length: count - executes.length }, () => item());
    const read = await rowsRead(() => append([...executes, ...protects]));
    expectAtMost(`a batch of ${count} onto a log of ${size}`, read, ROWS_PER_STATEMENT + count * ROWS_PER_ITEM);
    previous = protects.map((p) => p.receipt_id);
    last = previous.at(-1)!;
    size += count;
  }

  // Every statement's count, then the ones over their bound: a failure lists them all.
  const over: { what: string; rows: number; by: Record<string, number> }[] = [];
  for (const [what, s] of Object.entries(statements)) {
    const read = await rowsRead(s.run);
    if (read.total > s.rows) over.push({ what, rows: read.total, by: read.by });
  }
  expect(over).toEqual([]);
}

// A new database: PGlite never analyzes, and autovacuum waits for 50 rows and a minute.
test("plans made on empty tables without statistics read O(1) or O(log N) rows of a log of 100,000 receipts", async () => {
  await growAndCheck({ logSize: 100_000, analyzed: false });
}, 600_000);

// Statistics that say a table is tiny make a scan of it the cheapest plan; kept, it reads the
// whole log (any scan of 20,000 receipts is 200 times the bound).
test("plans made on statistics of the nearly empty tables read O(1) or O(log N) rows of a log of 20,000 receipts", async () => {
  await growAndCheck({ logSize: 20_000, analyzed: true });
}, 600_000);
