// Reading a Prometheus text exposition the way a scraper does: samples with their labels.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = LINE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? "").matchAll(LABEL)) labels[key] = JSON.parse(`"${raw}"`);
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples of `name` whose labels include `labels` (0 when there is none). */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples) {
    if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}

/** Metric names the exposition declares (`# TYPE name type`), with their types. */
export function declaredMetrics(text: string): Map<string, string> {
  const declared = new Map<string, string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) declared.set(name, type);
  return declared;
}
