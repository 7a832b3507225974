import pg from 'pg';

/** Counts the statements the service process sends to PostgreSQL while `run` runs, by their text. */
export async function statementsDuring(run: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0];
    seen.push(typeof first === 'string' ? first : typeof first === 'object' && first !== null && 'text' in first ? String(first.text) : '?');
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
  try {
    await run();
  } finally {
    pg.Client.prototype.query = query as typeof pg.Client.prototype.query;
  }
  return seen;
}
