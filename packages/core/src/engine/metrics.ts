/**
 * Counters and gauges of one scheduler node, keyed by their Prometheus name with labels
 * (e.g. `writes_refused_total{reason="STALE_FENCE"}`), rendered by the HTTP layer.
 */
export class NodeMetrics {
  private readonly values = new Map<string, number>();

  inc(key: string, by = 1): void {
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }

  set(key: string, value: number): void {
    this.values.set(key, value);
  }

  get(key: string): number {
    return this.values.get(key) ?? 0;
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries(this.values);
  }

  /** Prometheus text exposition format, every metric prefixed `fenceline_`. */
  render(extra: Record<string, number> = {}): string {
    const lines: string[] = [];
    const all = new Map([...this.values, ...Object.entries(extra)]);
    const seen = new Set<string>();
    for (const [key, value] of [...all].sort(([a], [b]) => a.localeCompare(b))) {
      const name = `fenceline_${key.split('{')[0]}`;
      if (!seen.has(name)) {
        seen.add(name);
        lines.push(`# TYPE ${name} ${name.endsWith('_total') ? 'counter' : 'gauge'}`);
      }
      lines.push(`fenceline_${key} ${value}`);
    }
    return lines.join('\n') + '\n';
  }
}
