// The service's metrics move with the requests it answers, counted once at the front door (HTTP,
// auth failures, quota refusals) or where a result is made (decisions, receipt batches); their
// labels are route patterns and closed vocabularies, never a raw path, id or tenant. Request log
// lines name the tenant and key behind a request, and never a secret.
import { describe, expect, test } from "bun:test";
import { hasDeno, runDeno } from "../helpers/deno.ts";
import { apiKey, bearer, execute, protect, setUsage } from "../helpers/customer.ts";
import { parseExposition, valueOf, type Sample } from "../helpers/metrics.ts";
import { call, logLines, signup, testService } from "../helpers/service.ts";

async function scrape(): Promise<Sample[]> {
  const { service } = await testService();
  return parseExposition((await service.deps.metrics.scrape()).text);
}

/** Runs `run` and answers how far each named series moved meanwhile. */
async function moved(run: () => Promise<unknown>): Promise<(name: string, labels?: Record<string, string>) => number> {
  const before = await scrape();
  await run();
  const after = await scrape();
  return (name, labels = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);
}

const READ = { action: "document.read" };

describe("metrics move with requests", () => {
  test("protect, execute and simulate count their requests, durations, decisions and receipt batches", async () => {
    const a = await signup();
    let protectStatus = 0;
    let decisions: string[] = [];
    const delta = await moved(async () => {
      const protected_ = await protect(a.apiKey, READ);
      protectStatus = protected_.status;
      const executed = await execute(a.apiKey, protected_.body.receipt_id);
      const simulated = await call("POST", "/v1/simulate", { json: { preset: "unknown_action" }, headers: apiKey(a.apiKey) });
      decisions = [protected_.body.decision, executed.body.decision, simulated.body.decision];
    });
    expect(protectStatus).toBe(200);
    expect(decisions).toEqual(["ALLOWED", "ALLOWED", "DENIED"]);
    expect(delta("warden_decisions_total", { kind: "protect", decision: "ALLOWED" })).toBe(1);
    expect(delta("warden_decisions_total", { kind: "execute", decision: "ALLOWED" })).toBe(1);
    expect(delta("warden_decisions_total", { kind: "simulate", decision: "DENIED" })).toBe(1);
    expect(delta("warden_decisions_total")).toBe(3);
    expect(delta("warden_http_requests_total", { method: "POST", route: "/v1/protect", status: "200" })).toBe(1);
    expect(delta("warden_http_requests_total", { method: "POST", route: "/v1/execute", status: "200" })).toBe(1);
    expect(delta("warden_http_requests_total", { method: "POST", route: "/v1/simulate", status: "200" })).toBe(1);
    expect(delta("warden_http_request_duration_seconds_count", { route: "/v1/protect" })).toBe(1);
    expect(delta("warden_http_request_duration_seconds_sum", { route: "/v1/protect" })).toBeGreaterThan(0);
    // Two receipts appended, in however many batches.
    expect(delta("warden_receipt_batch_size_sum")).toBe(2);
    expect(delta("warden_receipt_batch_size_count")).toBeGreaterThanOrEqual(1);
  });

  test("401s count as auth failures by error code; 429 quota_exceeded as a quota refusal by limit", async () => {
    const b = await signup();
    const statuses: number[] = [];
    const delta = await moved(async () => {
      statuses.push((await protect("warden_live_not_a_key", READ)).status);
      statuses.push((await call("GET", "/customer/keys")).status);
      const [key] = (await call("GET", "/customer/keys", { headers: bearer(b.token) })).body.keys;
      statuses.push((await call("POST", `/customer/keys/${key.key_id}/revoke`, { headers: bearer(b.token) })).status);
      statuses.push((await protect(b.apiKey, READ)).status);
    });
    expect(statuses).toEqual([401, 401, 200, 401]);
    expect(delta("warden_auth_failures_total", { reason: "unauthorized" })).toBe(2);
    expect(delta("warden_auth_failures_total", { reason: "key_revoked" })).toBe(1);
    expect(delta("warden_auth_failures_total")).toBe(3);
    expect(delta("warden_decisions_total")).toBe(0);

    const c = await signup();
    await setUsage(c.tenantId, 1000, 0);
    let refused: any;
    const quota = await moved(async () => (refused = await protect(c.apiKey, READ)));
    expect(refused.status).toBe(429);
    expect(refused.body.limit).toBe("protect_per_day");
    expect(quota("warden_quota_refusals_total", { limit: "protect_per_day" })).toBe(1);
    expect(quota("warden_quota_refusals_total")).toBe(1);
    expect(quota("warden_http_requests_total", { method: "POST", route: "/v1/protect", status: "429" })).toBe(1);
    expect(quota("warden_decisions_total")).toBe(0);
  });

  test("labels are route patterns and closed sets: never a raw path, id or tenant", async () => {
    const d = await signup();
    const [key] = (await call("GET", "/customer/keys", { headers: bearer(d.token) })).body.keys;
    const receipt = (await protect(d.apiKey, READ)).body;
    const delta = await moved(async () => {
      expect((await call("POST", `/customer/keys/${key.key_id}/rotate`, { headers: bearer(d.token) })).status).toBe(201);
      expect((await call("GET", `/customer/receipts/${receipt.receipt_id}`, { headers: bearer(d.token) })).status).toBe(200);
      expect((await call("GET", `/customer/receipts/rcpt_${"A".repeat(22)}`, { headers: bearer(d.token) })).status).toBe(404);
      expect((await call("GET", `/nothing/here/${d.tenantId}`)).status).toBe(404);
      expect((await call("GET", `/customer/keys/${key.key_id}/rotate?tenant=${d.tenantId}`)).status).toBe(404);
      expect((await call("PROPFIND", `/v1/protect/${d.tenantId}`)).status).toBe(404);
    });
    expect(delta("warden_http_requests_total", { method: "POST", route: "/customer/keys/:key_id/rotate", status: "201" })).toBe(1);
    expect(delta("warden_http_requests_total", { route: "/customer/receipts/:receipt_id" })).toBe(2);
    expect(delta("warden_http_requests_total", { method: "GET", route: "unmatched", status: "404" })).toBe(2);
    expect(delta("warden_http_requests_total", { method: "OTHER", route: "unmatched", status: "404" })).toBe(1);

    const ids = [d.tenantId, key.key_id, receipt.receipt_id, receipt.request_id];
    const idShape = /(cust|key|rcpt|req|upgr)_[0-9A-Za-z]{16,}/;
    for (const sample of await scrape()) {
      for (const value of Object.values(sample.labels)) {
        expect(idShape.test(value)).toBe(false);
        for (const id of ids) expect(value.includes(id)).toBe(false);
        // A route label is a pattern of the app's (it starts with "/") or the one "unmatched".
        if (sample.labels.route !== undefined) expect(sample.labels.route === "unmatched" || sample.labels.route.startsWith("/")).toBe(true);
      }
    }
  });

  test("event-loop lag and resident memory are measured", async () => {
    // Longer than the sampling period plus the threshold, whatever the timer's phase.
    const blockedFor = 300;
    const delta = await moved(async () => {
      const until = performance.now() + blockedFor;
      while (performance.now() < until) {}
      await Bun.sleep(250);
    });
    // The sampler's timer fired late by most of the block: one sample above 0.1 s.
    expect(delta("warden_event_loop_lag_seconds_count") - delta("warden_event_loop_lag_seconds_bucket", { le: "0.1" })).toBeGreaterThanOrEqual(1);
    expect(valueOf(await scrape(), "process_resident_memory_bytes")).toBeGreaterThan(10 * 1024 * 1024);
  });
});

describe.skipIf(!hasDeno)("under Deno", () => {
  test("prom-client counts, and resident memory and event-loop lag are measured, with no extra permission", async () => {
    const seen = await runDeno(["test/observability/deno-metrics.ts"]);
    expect(seen).toMatchObject({ runtime: "deno", requests: 1, decisions: 1, batchSum: 3, mailPending: 7, lagOver100ms: 1 });
    expect(seen.residentBytes).toBeGreaterThan(10 * 1024 * 1024);
  }, 60_000);
});

describe("request log lines", () => {
  const lineOf = (requestId: string) => {
    const line = logLines.map((l) => JSON.parse(l)).find((l) => l.event === "request" && l.request_id === requestId);
    if (!line) throw new Error(`no log line for ${requestId}`);
    return line;
  };

  test("carry tenant_id and key_id where known, and no secret", async () => {
    const e = await signup();
    const decided = await protect(e.apiKey, READ);
    expect(lineOf(decided.headers.get("x-request-id")!)).toMatchObject({ route: "/v1/protect", status: 200, tenant_id: e.tenantId, key_id: decided.body.key_id });

    const listed = await call("GET", "/customer/keys", { headers: bearer(e.token) });
    const sessionLine = lineOf(listed.headers.get("x-request-id")!);
    expect(sessionLine).toMatchObject({ route: "/customer/keys", status: 200, tenant_id: e.tenantId });
    expect(sessionLine).not.toHaveProperty("key_id");

    const anonymous = lineOf((await call("GET", "/v1/presets")).headers.get("x-request-id")!);
    expect(anonymous).not.toHaveProperty("tenant_id");
    const refused = lineOf((await protect("warden_live_not_a_key", READ)).headers.get("x-request-id")!);
    expect(refused).not.toHaveProperty("tenant_id");

    for (const secret of [e.apiKey, e.token, e.password]) expect(logLines.some((l) => l.includes(secret))).toBe(false);
  });
});
