// The service's own counters and histograms (src/observability/series.ts) read on /metrics exactly
// as prom-client's Counter and Histogram did: for any sequence of increments, observations and
// scrapes, and for a fixed sequence of requests through Metrics, against the exposition the
// prom-client-backed Metrics gave for it (test/observability/exposition.golden.txt).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { Counter, Histogram, Registry } from "prom-client";
import { Metrics } from "../../src/observability/metrics.ts";
import { CounterFamily, HistogramFamily } from "../../src/observability/series.ts";

const BOUNDS = [0.001, 0.01, 0.1, 1];

/** The same metrics twice: prom-client's own, and series.ts's, each on a registry of its own. */
function pair() {
  const theirs = new Registry();
  const ours = new Registry();
  const help = 'Help with a \\ backslash,\na newline and "quotes".';
  return {
    theirs,
    ours,
    counter: {
      theirs: new Counter({ name: "c_total", help, labelNames: ["method", "route", "status"], registers: [theirs] }),
      ours: new CounterFamily("c_total", help, ["method", "route", "status"], ours),
    },
    histogram: {
      theirs: new Histogram({ name: "h_seconds", help, labelNames: ["route"], buckets: BOUNDS, registers: [theirs] }),
      ours: new HistogramFamily("h_seconds", help, ["route"], BOUNDS, ours),
    },
    bare: {
      theirs: new Histogram({ name: "b", help, buckets: BOUNDS, registers: [theirs] }),
      ours: new HistogramFamily("b", help, [], BOUNDS, ours),
    },
  };
}

const label = fc.constantFrom("GET", "/v1/protect", "200", "unmatched", 'a "quoted" \\ value\n', "");
const value = fc.oneof(fc.constantFrom(0, ...BOUNDS, 1e-9, 5, 1e6), fc.double({ min: 0, max: 20, noNaN: true }));
const op = fc.oneof(
  fc.record({ kind: fc.constant("inc" as const), labels: fc.tuple(label, label, label), by: fc.oneof(fc.constant(1), fc.nat(1000)) }),
  fc.record({ kind: fc.constant("observe" as const), route: label, value }),
  fc.record({ kind: fc.constant("bare" as const), value }),
  fc.constant({ kind: "scrape" as const }),
);

describe("series.ts against prom-client", () => {
  test("any sequence of increments, observations and scrapes reads the same", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
        const m = pair();
        const scrapes = async () => [await m.theirs.metrics(), await m.ours.metrics()];
        for (const o of ops) {
          if (o.kind === "inc") {
            m.counter.theirs.labels(...o.labels).inc(o.by);
            m.counter.ours.labels(...o.labels).inc(o.by);
          } else if (o.kind === "observe") {
            m.histogram.theirs.labels(o.route).observe(o.value);
            m.histogram.ours.labels(o.route).observe(o.value);
          } else if (o.kind === "bare") {
            m.bare.theirs.observe(o.value);
            m.bare.ours.labels().observe(o.value);
          } else {
            const [theirs, ours] = await scrapes();
            expect(ours).toBe(theirs);
          }
        }
        const [theirs, ours] = await scrapes();
        expect(ours).toBe(theirs);
      }),
      { numRuns: 300 },
    );
  });

  test("a series taken but never used is not shown; one shown at 0 is", async () => {
    const m = pair();
    m.counter.theirs.labels("GET", "/a", "200");
    m.counter.ours.labels("GET", "/a", "200");
    m.histogram.theirs.labels("/a");
    m.histogram.ours.labels("/a");
    m.counter.theirs.labels("GET", "/b", "200").inc(0);
    m.counter.ours.labels("GET", "/b", "200").show();
    const ours = await m.ours.metrics();
    expect(ours).toBe(await m.theirs.metrics());
    expect(ours).toContain('c_total{method="GET",route="/b",status="200"} 0');
    expect(ours).not.toContain('route="/a"');
  });

  test("a wrong number of label values or a value that is not finite is refused", () => {
    const m = pair();
    expect(() => m.counter.ours.labels("GET")).toThrow("c_total has the labels [method, route, status]");
    expect(() => m.histogram.ours.labels("/a").observe(Number.NaN)).toThrow(TypeError);
    expect(() => m.histogram.ours.labels("/a").observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
  });
});

/** Requests as the front door, the decision paths and the batcher record them. */
function requests(metrics: Metrics): void {
  const http = metrics.http(["/v1/protect", "/v1/simulate", "/customer/keys", "/customer/keys/:key_id/rotate"]);
  for (let i = 0; i < 50; i++) {
    http.record("POST", "/v1/protect", 200, 0.0005 * 1.3 ** i);
    metrics.decision("protect", i % 3 === 0 ? "DENIED" : "ALLOWED");
  }
  http.record("POST", "/v1/simulate", 200, 0.0004);
  metrics.decision("simulate", "ALLOWED");
  metrics.decision("simulate", "MAYBE");
  metrics.decision("execute", "ALLOWED");
  http.record("GET", "/customer/keys", 401, 0.002);
  metrics.refusal(401, "unauthorized", undefined);
  metrics.refusal(401, "key_revoked", undefined);
  metrics.refusal(401, undefined, undefined);
  metrics.refusal(401, "mfa_required", undefined);
  http.record("POST", "/v1/protect", 429, 0.001);
  metrics.refusal(429, "quota_exceeded", "protect_per_day");
  metrics.refusal(429, "quota_exceeded", "something else");
  metrics.refusal(429, "rate_limited", undefined);
  http.record("PROPFIND", undefined, 404, 0.00001);
  http.record("GET", "/not/a/pattern", 404, 12);
  http.record("POST", "/customer/keys/:key_id/rotate", 201, 0.0025);
  http.record("GET", "/customer/keys", 200, 0.003);
  for (const size of [1, 3, 200, 500]) metrics.receiptBatch(size);
}

describe("Metrics", () => {
  test("a sequence of requests reads as it did with prom-client's own counters and histograms", async () => {
    const metrics = new Metrics({ mailOutboxPending: async () => 7, webhookOutboxPending: async () => 3 });
    metrics.close(); // no lag sample: its values depend on the machine
    requests(metrics);
    const { text } = await metrics.scrape();
    const golden = readFileSync(join(import.meta.dir, "exposition.golden.txt"), "utf8");
    expect(text.replace(/^process_resident_memory_bytes \d+$/m, "process_resident_memory_bytes 0")).toBe(golden);
  });
});
