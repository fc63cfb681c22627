// Counters and histograms whose series are plain objects, made once per label tuple and kept by
// their callers: counting a request is an addition, where prom-client's own metrics hash the label
// set and check it on every call, even through a child from labels(). prom-client's registry
// still renders them (it renders any object with a name and get()), so /metrics reads exactly as
// with prom-client's Counter and Histogram: test/observability/series.test.ts holds them to that.
import type { Metric, Registry } from "prom-client";

type Labels = Record<string, string>;

/** One sample as prom-client's registry renders it (its `getMetricsAsString`). */
interface Value {
  value: number;
  labels: Record<string, string | number>;
  sharedLabels?: Labels;
  metricName?: string;
  exemplar?: null;
}

interface Exposed {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: Value[];
}

/** A series appears in the exposition from its first use on (or `show()`), as prom-client's do. */
abstract class Series {
  private listed = false;

  constructor(
    readonly labels: Labels,
    private readonly list: Series[],
  ) {}

  show(): void {
    if (this.listed) return;
    this.listed = true;
    this.list.push(this);
  }
}

/** A name, help, label names, and the series made so far by label tuple, listed in order of first use. */
abstract class Family<S extends Series> {
  readonly aggregator = "sum";
  protected readonly listed: S[] = [];
  private readonly made = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these label values (in labelNames' order), made on the first call: keep it. */
  labels(...values: string[]): S {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name} has the labels [${this.labelNames.join(", ")}]`);
    const key = values.join("\u0000");
    let series = this.made.get(key);
    if (!series) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i]));
      this.made.set(key, (series = this.series(labels, this.listed)));
    }
    return series;
  }

  protected abstract series(labels: Labels, list: Series[]): S;
}

export class CounterSeries extends Series {
  value = 0;

  inc(by = 1): void {
    this.show();
    this.value += by;
  }
}

export class CounterFamily extends Family<CounterSeries> {
  readonly type = "counter";

  protected series(labels: Labels, list: Series[]): CounterSeries {
    return new CounterSeries(labels, list);
  }

  async get(): Promise<Exposed> {
    const values = this.listed.map((s) => ({ value: s.value, labels: s.labels }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** Counts a value in the first bucket whose bound holds it; a value beyond the last, in `count` only. */
export class HistogramSeries extends Series {
  /** Observations per bucket, not cumulated. */
  readonly buckets: number[];
  sum = 0;
  count = 0;

  constructor(
    labels: Labels,
    list: Series[],
    private readonly bounds: readonly number[],
  ) {
    super(labels, list);
    this.buckets = bounds.map(() => 0);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
    this.show();
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        this.buckets[i]++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

export class HistogramFamily extends Family<HistogramSeries> {
  readonly type = "histogram";

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
    // prom-client shows a histogram without labels from the start.
    if (labelNames.length === 0) this.labels().show();
  }

  protected series(labels: Labels, list: Series[]): HistogramSeries {
    return new HistogramSeries(labels, list, this.bounds);
  }

  async get(): Promise<Exposed> {
    const bucket = `${this.name}_bucket`;
    const values: Value[] = [];
    for (const s of this.listed) {
      let cumulated = 0;
      this.bounds.forEach((le, i) => {
        cumulated += s.buckets[i];
        values.push({ labels: { le }, sharedLabels: s.labels, value: cumulated, metricName: bucket, exemplar: null });
      });
      values.push(
        { labels: { le: "+Inf" }, sharedLabels: s.labels, value: s.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
