import { type ControlledTransaction, CompiledQuery, type Kysely } from 'kysely';
import type { Dialect } from './connect.js';
import type { Database } from './schema.js';

/** Runs `work` in a transaction and settles once that transaction has committed (or with `work`'s error). */
export type Transact = <T>(work: (tx: Kysely<Database>) => Promise<T>) => Promise<T>;

/**
 * One name serves every piece of work: each savepoint is released before the next is taken. The statements are
 * sent as compiled text: kysely's savepoint builders make a transaction object per savepoint, which cost several
 * times the statements themselves, three times per job step (bench/PROFILE.md, the job path).
 */
const SAVEPOINT = CompiledQuery.raw('savepoint "batched_work"');
const ROLLBACK_TO = CompiledQuery.raw('rollback to "batched_work"');
const RELEASE = CompiledQuery.raw('release "batched_work"');

interface Pending {
  work: (tx: Kysely<Database>) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/**
 * Transactions that commit together on SQLite. A commit there writes every page the transaction touched to the
 * WAL (a content with its jobs, their indexes and the meters: about 150 µs of a 1.1 ms creation, bench/PROFILE.md),
 * and SQLite runs one writer at a time anyway. So work that arrives in one turn of the event loop, or while a batch
 * runs, waits for the batch that starts next, and a batch runs each piece of work in a savepoint of one
 * transaction: work that fails is rolled back to its savepoint alone and rejects; the others resolve only after
 * the commit, so nobody hears of a write that a failed commit undid. Work alone in its batch (an idle service)
 * runs in a plain transaction.
 *
 * Work given here must start with a write: on SQLite a transaction that reads first and writes later fails with
 * SQLITE_BUSY when another process wrote in between, and in a batch one piece's read-first start is everyone's.
 *
 * PostgreSQL keeps a transaction per piece of work: it commits concurrent transactions together by itself, and
 * work batched behind another's row locks could deadlock against another process and fail a whole batch.
 */
export function transactionBatches(db: Kysely<Database>, dialect: Dialect, maxBatch = 64): Transact {
  const single: Transact = (work) => db.transaction().execute(work);
  if (dialect !== 'sqlite') return single;

  const queue: Pending[] = [];
  let draining = false;

  async function runBatch(batch: Pending[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch as [Pending];
      await single(only.work).then(only.resolve, only.reject);
      return;
    }
    const succeeded: [Pending, unknown][] = [];
    const failed = new Set<Pending>();
    let trx: ControlledTransaction<Database> | undefined;
    try {
      trx = await db.startTransaction().execute();
      for (const p of batch) {
        await trx.executeQuery(SAVEPOINT);
        let value: unknown;
        try {
          value = await p.work(trx);
        } catch (err) {
          try {
            await trx.executeQuery(ROLLBACK_TO);
            await trx.executeQuery(RELEASE);
          } catch {
            // SQLite has ended the whole transaction (full disk, I/O error), so the savepoint is gone too: the
            // work's own error is what went wrong, for this work and for every other in the batch (below).
            throw err;
          }
          failed.add(p);
          p.reject(err);
          continue;
        }
        await trx.executeQuery(RELEASE);
        succeeded.push([p, value]);
      }
      await trx.commit().execute();
    } catch (err) {
      // The transaction could not go on or could not commit: nothing of it stands, so no work in it succeeded.
      await trx?.rollback().execute().catch(() => undefined);
      for (const p of batch) if (!failed.has(p)) p.reject(err);
      return;
    }
    for (const [p, value] of succeeded) p.resolve(value);
  }

  async function drain(): Promise<void> {
    try {
      while (queue.length > 0) await runBatch(queue.splice(0, maxBatch));
    } finally {
      draining = false;
    }
  }

  return <T>(work: (tx: Kysely<Database>) => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (draining) return;
      draining = true;
      // better-sqlite3 answers at once, so a request runs from its socket to here without yielding: the batch starts
      // after the event loop has read every socket that was ready, so the requests on them can join it.
      setImmediate(() => void drain());
    });
}
