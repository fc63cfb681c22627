// No key secret is readable from the database (docs/api.md, API keys): a stored response of key
// create or rotate is kept only sealed under the Idempotency-Key, which is kept only as a hash,
// and every stored response goes away after 24 hours.
import { describe, expect, test } from "bun:test";
import { createService } from "../../src/app/service.ts";
import { idempotencyKeyHash, requestFingerprint, sealResponse, sweepIdempotency } from "../../src/http/idempotency.ts";
import { createLogger } from "../../src/log.ts";
import { bearer } from "../helpers/customer.ts";
import { call, signup, testConfig, testService } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

const idem = (key: string) => ({ "idempotency-key": key });

describe("stored Idempotency-Key responses hold no secret", () => {
  test("after key create and rotate: no column of any row holds the secret or the Idempotency-Key; replays are byte for byte", async () => {
    const { db } = await testService();
    const a = await signup();
    const createKey = `create-${crypto.randomUUID()}`;
    const rotateKey = `rotate-${crypto.randomUUID()}`;
    const create = () => call("POST", "/customer/keys", { json: { label: "sealed" }, headers: { ...bearer(a.token), ...idem(createKey) } });
    const created = await create();
    expect(created.status).toBe(201);
    const rotate = () => call("POST", `/customer/keys/${created.body.key_id}/rotate`, { headers: { ...bearer(a.token), ...idem(rotateKey) } });
    const rotated = await rotate();
    expect(rotated.status).toBe(201);

    const rows = await testQuery<{ row_text: string; key_hash: string }>(db, "idempotency_rows", [a.tenantId]);
    expect(rows.map((r) => r.key_hash).sort()).toEqual([idempotencyKeyHash(createKey), idempotencyKeyHash(rotateKey)].sort());
    for (const { row_text } of rows) {
      for (const secret of [created.body.secret, rotated.body.secret]) {
        expect(row_text).not.toContain(secret);
        // Nor any tell-tale part of it: the random middle is what a thief needs.
        expect(row_text).not.toContain(secret.slice(12, 44));
      }
      expect(row_text).not.toContain(createKey);
      expect(row_text).not.toContain(rotateKey);
    }
    // Every table and column of the tenant's rows: the secrets and the Idempotency-Keys are nowhere.
    expect(await testQuery(db, "tables_containing", [a.tenantId, [created.body.secret, rotated.body.secret, createKey, rotateKey]])).toEqual([]);
    // The scan does find what is there (the key's label), so an empty answer means something.
    expect((await testQuery<{ table_name: string }>(db, "tables_containing", [a.tenantId, ["sealed"]])).map((r) => r.table_name)).toContain("api_keys");

    const again = await create();
    expect(again.text).toBe(created.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await rotate()).text).toBe(rotated.text);
  });

  test("a record 24 hours old is not replayed, and the sweep deletes it", async () => {
    const { db } = await testService();
    const a = await signup();
    const path = "/customer/keys";
    const body = { label: "late" };
    const fingerprint = await requestFingerprint("POST", path, body);
    // A complete, well-sealed response of 25 hours ago: were expiry unchecked, it would replay.
    const oldKey = `old-${crypto.randomUUID()}`;
    const stale = await sealResponse(oldKey, a.tenantId, 200, '{"ok":true,"stale":true}');
    await testQuery(db, "idempotency_insert_old", [a.tenantId, idempotencyKeyHash(oldKey), 25, fingerprint, stale]);
    const fresh = await call("POST", path, { json: body, headers: { ...bearer(a.token), ...idem(oldKey) } });
    expect(fresh.status).toBe(201);
    expect(fresh.headers.has("idempotent-replayed")).toBe(false);
    expect(fresh.body.stale).toBeUndefined();

    // Two more old records, never asked for again: only the sweep removes them; a fresh one stays.
    const forgotten = [`gone-${crypto.randomUUID()}`, `gone-${crypto.randomUUID()}`];
    for (const key of forgotten) await testQuery(db, "idempotency_insert_old", [a.tenantId, idempotencyKeyHash(key), 25, fingerprint, stale]);
    const kept = await testQuery<{ key_hash: string }>(db, "idempotency_rows", [a.tenantId]);
    expect(kept).toHaveLength(3);
    expect(await sweepIdempotency(db, 1)).toBeGreaterThanOrEqual(2);
    const left = (await testQuery<{ key_hash: string }>(db, "idempotency_rows", [a.tenantId])).map((r) => r.key_hash);
    expect(left).toEqual([idempotencyKeyHash(oldKey)]);
  });

  test("the service sweeps by itself when it starts", async () => {
    const { db } = await testService();
    const a = await signup();
    const key = `boot-${crypto.randomUUID()}`;
    await testQuery(db, "idempotency_insert_old", [a.tenantId, idempotencyKeyHash(key), 30, "c".repeat(64), "b2xk"]);
    const service = await createService(testConfig(), { db, log: createLogger("error", () => {}) });
    try {
      const deadline = Date.now() + 10_000;
      while ((await testQuery(db, "idempotency_rows", [a.tenantId])).length > 0 && Date.now() < deadline) await Bun.sleep(50);
      expect(await testQuery(db, "idempotency_rows", [a.tenantId])).toEqual([]);
    } finally {
      await service.close();
    }
  });

  test("a sealed body opens only with its own Idempotency-Key, tenant and status", async () => {
    const { openResponse } = await import("../../src/http/idempotency.ts");
    const sealed = await sealResponse("k-1", "cust_a", 201, '{"secret":"x"}');
    expect(await openResponse("k-1", "cust_a", 201, sealed)).toBe('{"secret":"x"}');
    for (const [key, tenant, status] of [["k-2", "cust_a", 201], ["k-1", "cust_b", 201], ["k-1", "cust_a", 200]] as const) {
      await expect(openResponse(key, tenant, status, sealed)).rejects.toThrow();
    }
  });
});
