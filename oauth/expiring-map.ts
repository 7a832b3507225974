/** A small map whose entries expire and whose size is bounded (the oldest entry goes first). */
export class ExpiringMap<V> {
  private readonly entries = new Map<string, { until: number; value: V }>();

  constructor(private readonly maxEntries: number) {}

  set(key: string, value: V, ms: number): void {
    this.entries.delete(key);
    this.entries.set(key, { until: Date.now() + ms, value });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  /** The live entry's value and the ms it has left, or undefined. */
  get(key: string): { value: V; msLeft: number } | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    const msLeft = entry.until - Date.now();
    if (msLeft > 0) return { value: entry.value, msLeft };
    this.entries.delete(key);
    return undefined;
  }

  take(key: string): boolean {
    const present = this.get(key) !== undefined;
    this.entries.delete(key);
    return present;
  }
}
