// The service's Prometheus metrics, on a registry of its own made in the composition root
// (prom-client's global registry would be module state). Every label value comes from a closed set
// (route patterns, methods, the error codes of docs/api.md, decisions), never from a raw path or an
// id, so the number of series stays bounded. Counters and histograms are ./series.ts's, whose
// series are made once and kept here: a request hashes no label set.
import { Gauge, Registry } from "prom-client";
import { CounterFamily, type CounterSeries, HistogramFamily, type HistogramSeries } from "./series.ts";
import { within } from "./within.ts";

/** The route label of a request that matched no route (or was refused before routing). */
export const UNMATCHED_ROUTE = "unmatched";

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const DECISION_KINDS = ["protect", "execute", "simulate"] as const;
const DECISIONS = ["ALLOWED", "DENIED"] as const;
const QUOTA_LIMITS = ["protect_per_day", "execute_per_day", "receipts_stored"] as const;
/** 401 codes shown at 0 from the start; others get their series on first use. */
const AUTH_REASONS = ["unauthorized", "token_expired", "key_revoked"] as const;

export type DecisionKind = (typeof DECISION_KINDS)[number];

/** How often the event loop is sampled: each sample is how late a timer fired. */
const LAG_SAMPLE_MS = 100;
/** A gauge read from the database waits no longer than this: a scrape must answer. */
const SOURCE_TIMEOUT_MS = 2000;

export interface MetricSources {
  /** Messages in the mail outbox still to be sent; read at each scrape. */
  mailOutboxPending(): Promise<number>;
  /** Webhook deliveries not yet made (due or waiting for a retry); read at each scrape. */
  webhookOutboxPending(): Promise<number>;
}

/** A series shown at 0 from the start, so that its first increment shows in rate(). */
function zeroed(counter: CounterFamily, ...labels: string[]): CounterSeries {
  const series = counter.labels(...labels);
  series.show();
  return series;
}

/** The request counter and duration histogram of one route pattern. */
class RouteSeries {
  readonly duration: HistogramSeries;
  private readonly counts = new Map<string, Map<number, CounterSeries>>();

  constructor(
    readonly route: string,
    private readonly requests: CounterFamily,
    durations: HistogramFamily,
  ) {
    this.duration = durations.labels(route);
  }

  count(method: string, status: number): void {
    let byStatus = this.counts.get(method);
    if (!byStatus) this.counts.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) byStatus.set(status, (series = this.requests.labels(method, this.route, String(status))));
    series.inc();
  }
}

/** Counts requests by route pattern; made once per app with the app's route table. */
export class HttpMetrics {
  private readonly routes = new Map<string, RouteSeries>();
  private readonly unmatched: RouteSeries;

  constructor(patterns: Iterable<string>, requests: CounterFamily, durations: HistogramFamily) {
    // Only the app's own patterns become labels: anything else, whatever its path, is one series.
    for (const route of patterns) if (!this.routes.has(route)) this.routes.set(route, new RouteSeries(route, requests, durations));
    this.unmatched = new RouteSeries(UNMATCHED_ROUTE, requests, durations);
  }

  /** One finished request: route is the matched pattern (undefined when none matched). */
  record(method: string, route: string | undefined, status: number, seconds: number): void {
    const series = (route !== undefined && this.routes.get(route)) || this.unmatched;
    series.duration.observe(seconds);
    series.count(METHODS.has(method) ? method : "OTHER", status);
  }
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: CounterFamily;
  private readonly durations: HistogramFamily;
  private readonly decisions: Record<DecisionKind, Record<string, CounterSeries>>;
  private readonly decisionCounter: CounterFamily;
  private readonly quotaRefusals: CounterFamily;
  private readonly authFailures: CounterFamily;
  private readonly batchSizes: HistogramSeries;
  private readonly lag: HistogramSeries;
  private lagTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(sources: MetricSources) {
    const registry = this.registry;
    this.requests = new CounterFamily("warden_http_requests_total", "HTTPS requests answered, by method, route pattern and status.", ["method", "route", "status"], registry);
    this.durations = new HistogramFamily(
      "warden_http_request_duration_seconds",
      "Time from a request's arrival to its response, by route pattern.",
      ["route"],
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registry,
    );
    this.decisionCounter = new CounterFamily("warden_decisions_total", "Decisions produced by protect, execute and simulate, by kind and decision.", ["kind", "decision"], registry);
    this.decisions = { protect: {}, execute: {}, simulate: {} };
    for (const kind of DECISION_KINDS) {
      for (const decision of DECISIONS) this.decisions[kind][decision] = zeroed(this.decisionCounter, kind, decision);
    }
    this.quotaRefusals = new CounterFamily("warden_quota_refusals_total", "Requests refused with 429 quota_exceeded, by the limit reached.", ["limit"], registry);
    for (const limit of QUOTA_LIMITS) zeroed(this.quotaRefusals, limit);
    this.authFailures = new CounterFamily("warden_auth_failures_total", "Requests answered 401, by error code.", ["reason"], registry);
    for (const reason of AUTH_REASONS) zeroed(this.authFailures, reason);
    this.batchSizes = new HistogramFamily("warden_receipt_batch_size", "Receipts appended per database statement (group commit).", [], [1, 2, 5, 10, 20, 50, 100, 200], registry).labels();
    const registers = [registry];
    new Gauge({
      name: "warden_mail_outbox_pending",
      help: "Messages in the mail outbox not yet sent (read from the database at each scrape).",
      registers,
      async collect() {
        // A database that does not answer leaves the last value: /metrics itself still answers.
        const pending = await within(sources.mailOutboxPending(), SOURCE_TIMEOUT_MS);
        if (pending !== undefined) this.set(pending);
      },
    });
    new Gauge({
      name: "warden_webhook_outbox_pending",
      help: "Webhook deliveries not yet made, due or waiting for a retry (read from the database at each scrape).",
      registers,
      async collect() {
        const pending = await within(sources.webhookOutboxPending(), SOURCE_TIMEOUT_MS);
        if (pending !== undefined) this.set(pending);
      },
    });
    new Gauge({
      name: "process_resident_memory_bytes",
      help: "Resident memory size in bytes.",
      registers,
      collect() {
        // process.memoryUsage.rss() where prom-client's default reads /proc (Deno allows that
        // only with --allow-all).
        this.set(process.memoryUsage.rss());
      },
    });
    this.lag = new HistogramFamily(
      "warden_event_loop_lag_seconds",
      `How late a timer due every ${LAG_SAMPLE_MS} ms fired: time the event loop was busy with other work.`,
      [],
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registry,
    ).labels();
    this.sampleLag();
  }

  /** The recorder of HTTPS requests for an app with these route patterns. */
  http(patterns: Iterable<string>): HttpMetrics {
    return new HttpMetrics(patterns, this.requests, this.durations);
  }

  /** A protect, execute or simulate result was produced. */
  decision(kind: DecisionKind, decision: string): void {
    (this.decisions[kind][decision] ?? this.decisionCounter.labels(kind, "other")).inc();
  }

  /** A response refused a request: 401s count as auth failures, 429 quota_exceeded by its limit. */
  refusal(status: number, code: string | undefined, limit: unknown): void {
    if (status === 401) this.authFailures.labels(code ?? "other").inc();
    else if (status === 429 && code === "quota_exceeded") {
      this.quotaRefusals.labels((QUOTA_LIMITS as readonly unknown[]).includes(limit) ? (limit as string) : "other").inc();
    }
  }

  receiptBatch(size: number): void {
    this.batchSizes.observe(size);
  }

  /** The Prometheus text exposition of every metric. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  /** Stops the event-loop sampler. */
  close(): void {
    clearTimeout(this.lagTimer);
    this.lagTimer = undefined;
  }

  // A timer chain rather than perf_hooks.monitorEventLoopDelay: Deno's does not see a blocked loop.
  private sampleLag(): void {
    const due = performance.now() + LAG_SAMPLE_MS;
    this.lagTimer = setTimeout(() => {
      this.lag.observe(Math.max(0, performance.now() - due) / 1000);
      this.sampleLag();
    }, LAG_SAMPLE_MS);
    // The sampler alone never keeps a process alive.
    (this.lagTimer as { unref?: () => void }).unref?.();
  }
}
