import pg from 'pg';

/**
 * Counts the statements the service process sends to PostgreSQL while `run` runs, by their text. With `carrying`,
 * only those whose parameters mention one of these strings: the server's own workers send statements of the same
 * text meanwhile, for other rows.
 */
export async function statementsDuring(run: () => Promise<unknown>, options: { carrying?: readonly string[] } = {}): Promise<string[]> {
  const seen: string[] = [];
  const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args;
    const config = typeof first === 'object' && first !== null ? (first as { text?: unknown; values?: unknown }) : null;
    const text = typeof first === 'string' ? first : config !== null && 'text' in config ? String(config.text) : '?';
    const values = JSON.stringify(Array.isArray(second) ? second : (config?.values ?? []));
    if (options.carrying === undefined || options.carrying.some((s) => values.includes(s))) seen.push(text);
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
  try {
    await run();
  } finally {
    pg.Client.prototype.query = query as typeof pg.Client.prototype.query;
  }
  return seen;
}
