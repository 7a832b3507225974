import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';

/** Statements named per process at most: each is kept by every pooled connection that ran it. */
const MAX_NAMED = 256;
/** Runs of one text before it is named: a statement built once (a long IN list, a migration) stays unnamed. */
const NAME_AFTER = 3;
/** Texts counted toward `NAME_AFTER` at once; the count starts over when it is full. */
const MAX_COUNTED = 4096;

/**
 * A pool whose connections run repeated statements as named prepared statements. kysely sends every query as an
 * unnamed statement, which PostgreSQL parses and plans on every run; a job step's indexed statements cost about as
 * much to plan as to run. Once a text with parameters has run `NAME_AFTER` times it gets a name, and each
 * connection prepares it on its first use of that name (pg keeps track), then only binds and executes it.
 * Statements without parameters (`begin`, `commit`) keep the simple protocol, which is one message.
 */
export function namingStatements(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>();
  const counts = new Map<string, number>();
  /** Texts whose prepared form went stale (see `query`): they run unnamed from then on. */
  const unnamed = new Set<string>();
  let issued = 0;
  const nameOf = (text: string): string | undefined => {
    const known = names.get(text);
    if (known !== undefined || issued >= MAX_NAMED || unnamed.has(text)) return known;
    const seen = (counts.get(text) ?? 0) + 1;
    if (seen < NAME_AFTER) {
      if (counts.size >= MAX_COUNTED) counts.clear();
      counts.set(text, seen);
      return undefined;
    }
    counts.delete(text);
    const name = `k${issued++}`;
    names.set(text, name);
    return name;
  };
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
      function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
      function query<R>(what: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
        if (typeof what !== 'string') return client.query(what as unknown as pg.Submittable) as unknown as PostgresCursor<R>;
        const values = [...(parameters ?? [])];
        const name = values.length > 0 ? nameOf(what) : undefined;
        if (name === undefined) return client.query(what, values) as unknown as Promise<PostgresQueryResult<R>>;
        return client.query({ name, text: what, values }).catch(async (err: unknown) => {
          if (!staleResultType(err)) throw err;
          // Another process changed a table's columns (a migration during a rolling deploy): this prepared
          // statement can no longer run on any connection, so the text runs unnamed from now on. Out of a
          // transaction it runs again at once; in one, the transaction is aborted and fails as it would have.
          names.delete(what);
          unnamed.add(what);
          return client.query(what, values).catch((again: unknown) => {
            throw isAbortedTransaction(again) ? err : again;
          });
        }) as unknown as Promise<PostgresQueryResult<R>>;
      }
      return { query, release: () => client.release() };
    },
    end: () => pool.end(),
  };
}

const codeOf = (err: unknown): unknown => (typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined);

/** PostgreSQL's "cached plan must not change result type" (feature_not_supported, raised for a prepared plan). */
function staleResultType(err: unknown): boolean {
  return codeOf(err) === '0A000' && err instanceof Error && err.message.includes('cached plan must not change result type');
}

function isAbortedTransaction(err: unknown): boolean {
  return codeOf(err) === '25P02';
}
