// Prometheus metrics for the public API (docs/operator-guide.md), written in the text exposition format
// 0.0.4 by hand: counters of requests, activities and signatures, and a request latency histogram
// with a fixed bucket list. Labels come only from declared operations, types and statuses, so an
// unknown path cannot grow the series without bound.

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels = Record<string, string>;

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

// Every request counts into a few series; their label text is escaped once per distinct label set
// (bounded: values come from declared operations, types and statuses only).
const labelTexts = new Map<string, string>();

function seriesKey(labels: Labels): string {
  let raw = '';
  for (const k in labels) raw += `${k}\u0000${labels[k]}\u0001`;
  let text = labelTexts.get(raw);
  if (text === undefined) {
    text = labelText(labels);
    labelTexts.set(raw, text);
  }
  return text;
}

class Counter {
  private readonly values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels, by = 1): void {
    const key = seriesKey(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }

  render(): string[] {
    const out = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const [labels, v] of this.values) out.push(`${this.name}${labels} ${v}`);
    return out;
  }
}

class Histogram {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  observe(labels: Labels, value: number): void {
    const key = seriesKey(labels);
    let s = this.series.get(key);
    if (!s) {
      s = { labels, counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    for (let i = 0; i < BUCKETS.length; i++) if (value <= BUCKETS[i]) s.counts[i]++;
    s.sum += value;
    s.count++;
  }

  render(): string[] {
    const out = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values()) {
      BUCKETS.forEach((b, i) => out.push(`${this.name}_bucket${labelText({ ...s.labels, le: String(b) })} ${s.counts[i]}`));
      out.push(`${this.name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`);
      out.push(`${this.name}_sum${labelText(s.labels)} ${s.sum}`);
      out.push(`${this.name}_count${labelText(s.labels)} ${s.count}`);
    }
    return out;
  }
}

export class Metrics {
  readonly requests = new Counter('sigil_requests_total', 'Public API requests by operation, kind (submit or query) and HTTP status.');
  readonly duration = new Histogram('sigil_request_duration_seconds', 'Public API request latency by operation.');
  readonly activities = new Counter('sigil_activities_total', 'Activities answered, by type and status.');
  readonly signatures = new Counter('sigil_signatures_total', 'Signatures produced, by signing operation.');

  /** One finished public API request; `outcome` is the pipeline's response log when it answered. */
  request(r: { operation: string; kind: string; httpStatus: number; seconds: number; type?: string; status?: string; signatures?: number }): void {
    this.requests.inc({ operation: r.operation, kind: r.kind, status: String(r.httpStatus) });
    this.duration.observe({ operation: r.operation }, r.seconds);
    if (r.type && r.status) this.activities.inc({ type: r.type, status: r.status });
    if (r.signatures) this.signatures.inc({ operation: r.operation }, r.signatures);
  }

  /** Values kept outside the HTTP layer (the store's round trips, the log sink's dropped lines, the event loop's delay), read at each scrape. */
  private readonly external: { name: string; help: string; type: 'counter' | 'gauge'; read: () => number }[] = [];

  addCounter(name: string, help: string, read: () => number): void {
    this.external.push({ name, help, type: 'counter', read });
  }

  addGauge(name: string, help: string, read: () => number): void {
    this.external.push({ name, help, type: 'gauge', read });
  }

  render(): string {
    // Labelled with the process, so the workers of `serve --workers N` (each answering for itself) can be told apart.
    const external = this.external.flatMap((c) => [`# HELP ${c.name} ${c.help}`, `# TYPE ${c.name} ${c.type}`, `${c.name}{pid="${process.pid}"} ${c.read()}`]);
    return [...this.requests.render(), ...this.duration.render(), ...this.activities.render(), ...this.signatures.render(), ...external].join('\n') + '\n';
  }
}
