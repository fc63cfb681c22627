// GET /customer/receipts (cursor pagination), one receipt, and the NDJSON export.
import { beforeAll, describe, expect, test } from "bun:test";
import { bearer, execute, LARGE_PAYMENT, protect, setPlan, SMALL_PAYMENT } from "../helpers/customer.ts";
import { call, expectErrorShape, signup } from "../helpers/service.ts";

type Signed = Awaited<ReturnType<typeof signup>>;

describe("GET /customer/receipts", () => {
  let a: Signed;
  const ids: string[] = [];
  beforeAll(async () => {
    a = await signup();
    // The log starts with the signup's key.created event.
    ids.push(...(await call("GET", "/customer/receipts", { headers: bearer(a.token) })).body.receipts.map((r: { receipt_id: string }) => r.receipt_id));
    expect(ids).toHaveLength(1);
    for (let i = 0; i < 7; i++) {
      const r = await protect(a.apiKey, i === 2 ? LARGE_PAYMENT : SMALL_PAYMENT);
      ids.push(r.body.receipt_id);
    }
  });
  const list = (query = "", token = a.token) => call("GET", `/customer/receipts${query}`, { headers: bearer(token) });

  test("newest first; pages follow next_cursor to the end, where it is null", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const reply = await list(`?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(reply.status).toBe(200);
      expect(reply.body.ok).toBe(true);
      expect(reply.body.receipts.length).toBeLessThanOrEqual(3);
      seen.push(...reply.body.receipts.map((r: { receipt_id: string }) => r.receipt_id));
      cursor = reply.body.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
  });

  test("default limit 50, exact page sizes end with null", async () => {
    const all = await list();
    expect(all.body.receipts).toHaveLength(8);
    expect(all.body.next_cursor).toBeNull();
    const exact = await list("?limit=8");
    expect(exact.body.next_cursor).toBeNull();
    const first = await list("?limit=1");
    expect(first.body.receipts[0].seq).toBe(7);
    expect(typeof first.body.next_cursor).toBe("string");
  });

  test("limit outside 1..100, a foreign cursor or an unknown parameter: 400 invalid_request", async () => {
    for (const q of ["?limit=0", "?limit=101", "?limit=2.5", "?limit=ten", "?cursor=zzz", "?cursor=" + Buffer.from("s-1").toString("base64url"), "?cursor=%00", "?page=2"]) {
      expectErrorShape(await list(q), 400, "invalid_request");
    }
    expect((await list("?limit=100")).status).toBe(200);
  });

  test("a tenant sees only its own receipts", async () => {
    const b = await signup();
    const reply = await list("", b.token);
    // b's log: its own signup's event, nothing of a's.
    expect(reply.body.next_cursor).toBeNull();
    expect(reply.body.receipts.map((r: { tenant_id: string; kind: string; seq: number }) => [r.tenant_id, r.kind, r.seq])).toEqual([[b.tenantId, "event", 0]]);
  });

  test("GET /customer/receipts/{receipt_id}: the receipt as protect returned it; another tenant's or unknown: 404", async () => {
    const b = await signup();
    const made = await protect(a.apiKey, SMALL_PAYMENT);
    const reply = await call("GET", `/customer/receipts/${made.body.receipt_id}`, { headers: bearer(a.token) });
    expect(reply.status).toBe(200);
    const { ok: _ok, verified: _verified, ...receipt } = made.body;
    expect(reply.body).toEqual({ ok: true, receipt });
    expectErrorShape(await call("GET", `/customer/receipts/${made.body.receipt_id}`, { headers: bearer(b.token) }), 404, "not_found");
    expectErrorShape(await call("GET", `/customer/receipts/rcpt_${"0".repeat(22)}`, { headers: bearer(a.token) }), 404, "not_found");
    expectErrorShape(await call("GET", "/customer/receipts/whatever", { headers: bearer(a.token) }), 404, "not_found");
  });
});

describe("GET /customer/receipts/export", () => {
  test("free plan: 403 plan_required (receipt_export needs pro)", async () => {
    const a = await signup();
    const reply = await call("GET", "/customer/receipts/export", { headers: bearer(a.token) });
    expectErrorShape(reply, 403, "plan_required");
    expect(reply.body.required_plan).toBe("pro");
  });

  test("pro: NDJSON, oldest first, one stored receipt per line, across export pages", async () => {
    const a = await signup();
    await setPlan(a.tenantId, "pro");
    // A new log: the signup's key.created event only.
    const fresh = await call("GET", "/customer/receipts/export", { headers: bearer(a.token) });
    expect(fresh.status).toBe(200);
    const signupEvent = JSON.parse(fresh.text);
    expect(fresh.text).toBe(JSON.stringify(signupEvent) + "\n");
    expect(signupEvent).toMatchObject({ seq: 0, kind: "event", payload: { event: "key.created" } });

    const made = [];
    for (let i = 0; i < 5; i++) made.push((await protect(a.apiKey)).body);
    made.push((await execute(a.apiKey, made[0].receipt_id)).body);
    const reply = await call("GET", "/customer/receipts/export", { headers: bearer(a.token) });
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("application/x-ndjson");
    expect(reply.text.endsWith("\n")).toBe(true);
    const lines = reply.text.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(lines[0]).toEqual(signupEvent);
    for (const [i, line] of lines.slice(1).entries()) {
      const { ok: _ok, verified: _v, executed: _e, ...receipt } = made[i];
      expect(line).toEqual(receipt);
    }
  });

  test("a log longer than one export page (500) arrives whole and in order", async () => {
    const a = await signup();
    await setPlan(a.tenantId, "enterprise");
    for (let i = 0; i < 520; i += 20) await Promise.all(Array.from({ length: 20 }, () => protect(a.apiKey)));
    const reply = await call("GET", "/customer/receipts/export", { headers: bearer(a.token) });
    const seqs = reply.text.trimEnd().split("\n").map((l) => JSON.parse(l).seq);
    expect(seqs).toEqual(Array.from({ length: 521 }, (_, i) => i)); // the signup's event, then 520 decisions
  }, 60_000);
});
