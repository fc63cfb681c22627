// Run by metrics.test.ts under Deno: the service's metrics as Deno computes them, as JSON.
import { Metrics } from "../../src/observability/metrics.ts";
import { parseExposition, valueOf } from "../helpers/metrics.ts";

const metrics = new Metrics({ mailOutboxPending: async () => 7, webhookOutboxPending: async () => 0 });
metrics.http(["/v1/protect"]).record("POST", "/v1/protect", 200, 0.003);
metrics.decision("protect", "ALLOWED");
metrics.receiptBatch(3);
const until = performance.now() + 300;
while (performance.now() < until) {}
await new Promise((resolve) => setTimeout(resolve, 250));
const samples = parseExposition((await metrics.scrape()).text);
metrics.close();
const runtime = "Deno" in globalThis ? "deno" : "other";
console.log(
  JSON.stringify({
    runtime,
    requests: valueOf(samples, "warden_http_requests_total", { method: "POST", route: "/v1/protect", status: "200" }),
    decisions: valueOf(samples, "warden_decisions_total", { kind: "protect", decision: "ALLOWED" }),
    batchSum: valueOf(samples, "warden_receipt_batch_size_sum"),
    mailPending: valueOf(samples, "warden_mail_outbox_pending"),
    residentBytes: valueOf(samples, "process_resident_memory_bytes"),
    lagOver100ms: valueOf(samples, "warden_event_loop_lag_seconds_count") - valueOf(samples, "warden_event_loop_lag_seconds_bucket", { le: "0.1" }),
  }),
);
