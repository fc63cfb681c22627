// Quotas hold exactly under concurrency: counted in one SQL statement with the receipt append.
import { expect, test } from "bun:test";
import { bearer, logHead, pool, protect } from "../helpers/customer.ts";
import { call, signup, testService } from "../helpers/service.ts";

test("1,010 protect calls, 16 at a time, on a free tenant: exactly 1,000 stored (seq 1..1000, after the signup's event), 10 refused", async () => {
  const a = await signup();
  const head = await logHead(a.token);
  const started = performance.now();
  const replies = await pool(1010, 16, () => protect(a.apiKey));
  const elapsed = performance.now() - started;

  const ok = replies.filter((r) => r.status === 200);
  const refused = replies.filter((r) => r.status === 429);
  expect(ok).toHaveLength(1000);
  expect(refused).toHaveLength(10);
  // Free: 1,000 a day and 1,000 stored. Both are full now; storage outlasts the day, so it is named.
  for (const r of refused) expect(r.body).toMatchObject({ ok: false, error: "quota_exceeded", limit: "receipts_stored" });
  expect(ok.map((r) => r.body.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 1000 }, (_, i) => head.size + i));
  expect(new Set(ok.map((r) => r.body.receipt_id)).size).toBe(1000);
  expect(new Set(ok.map((r) => r.headers.get("ratelimit-remaining"))).size).toBe(1000);

  const { db } = await testService();
  expect(await db.one("receipts/usage_summary", [a.tenantId, null])).toMatchObject({ protect_today: 1000, execute_today: 0, receipts_stored: 1000 });

  // The log agrees: 1,000 receipts after what it held, newest first, chained without a gap.
  const seen: { seq: number; prev_hash: string | null; chain_hash: string }[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { receipts: typeof seen; next_cursor: string | null } } = await call("GET", `/customer/receipts?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { headers: bearer(a.token) });
    seen.push(...page.body.receipts);
    cursor = page.body.next_cursor;
  } while (cursor);
  expect(seen.map((r) => r.seq)).toEqual(Array.from({ length: head.size + 1000 }, (_, i) => head.size + 999 - i));
  for (let i = 0; i < seen.length - 1; i++) expect(seen[i].prev_hash).toBe(seen[i + 1].chain_hash);
  console.log(`quota test: 1,010 protect calls in ${Math.round(elapsed)} ms`);
}, 120_000);
