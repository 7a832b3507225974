import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, type Db } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { transactionBatches, type Transact } from '../../db/transaction-batch.js';

let dir: string;
let file: string;
let db: Db;
let transact: Transact;
/** Statements run, by their SQL text, counted where kysely hands them to the driver. */
let statements: string[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'publisher-batch-'));
  file = join(dir, 'batch.db');
  db = connect({ dialect: 'sqlite', file });
  if (db.dialect !== 'sqlite') throw new Error('expected SQLite');
  await sql`create table notes (id text primary key)`.execute(db.kysely);
  statements = [];
  const prepare = db.sqlite.prepare.bind(db.sqlite);
  db.sqlite.prepare = (text) => {
    statements.push(text);
    return prepare(text);
  };
  transact = transactionBatches(db.kysely, 'sqlite');
});

afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const insert = (tx: Kysely<Database>, id: string) => sql`insert into notes (id) values (${id})`.execute(tx);

/** What another connection (another process, say) sees committed. */
function committed(): string[] {
  const other = new BetterSqlite3(file, { readonly: true });
  try {
    return (other.prepare('select id from notes order by id').all() as { id: string }[]).map((r) => r.id);
  } finally {
    other.close();
  }
}

const begins = () => statements.filter((s) => s === 'begin').length;

describe('transactionBatches on SQLite', () => {
  it('commits work that arrives in one turn in one transaction, and settles each only once it is committed', async () => {
    const seenAtResolve: number[] = [];
    const ids = Array.from({ length: 20 }, (_, i) => `n${String(i).padStart(2, '0')}`);
    const values = await Promise.all(
      ids.map((id) =>
        transact(async (tx) => {
          await insert(tx, id);
          return id.toUpperCase();
        }).then((value) => {
          seenAtResolve.push(committed().length);
          return value;
        }),
      ),
    );
    expect(values).toEqual(ids.map((id) => id.toUpperCase()));
    expect(begins()).toBe(1);
    expect(statements.filter((s) => s === 'commit')).toHaveLength(1);
    // Every caller heard of its write after all twenty were committed, never before.
    expect(seenAtResolve.every((n) => n === 20)).toBe(true);
    expect(committed()).toEqual(ids);
  });

  it('rolls failed work back alone: its own earlier writes go, the others stay, and it gets its own error', async () => {
    const outcomes = await Promise.allSettled([
      transact((tx) => insert(tx, 'a')),
      transact(async (tx) => {
        await insert(tx, 'b');
        await insert(tx, 'a'); // a primary key taken by the work before: a constraint error
      }),
      transact((tx) => insert(tx, 'c')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE constraint failed/);
    expect(begins()).toBe(1);
    expect(committed()).toEqual(['a', 'c']);
  });

  it('fails every piece of work when the transaction itself ends, and keeps none of their writes', async () => {
    const outcomes = await Promise.allSettled([
      transact((tx) => insert(tx, 'x')),
      transact(async (tx) => {
        await insert(tx, 'y');
        // Ends the shared transaction under everyone, as an I/O error would.
        await sql`rollback`.execute(tx);
        throw new Error('the transaction is gone');
      }),
      transact((tx) => insert(tx, 'z')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(committed()).toEqual([]);
    // The next batch starts clean.
    await Promise.all([transact((tx) => insert(tx, 'after-1')), transact((tx) => insert(tx, 'after-2'))]);
    expect(committed()).toEqual(['after-1', 'after-2']);
  });

  it('runs work that arrives alone in a plain transaction, and work arriving during a batch in the next one', async () => {
    await transact((tx) => insert(tx, 'solo'));
    expect(begins()).toBe(1);
    expect(statements.some((s) => s.startsWith('savepoint'))).toBe(false);
    let late: Promise<unknown> | undefined;
    await Promise.all([
      transact(async (tx) => {
        late = transact((t) => insert(t, 'late'));
        await insert(tx, 'first');
      }),
      transact((tx) => insert(tx, 'second')),
    ]);
    await late;
    expect(begins()).toBe(3);
    expect(committed()).toEqual(['first', 'late', 'second', 'solo']);
  });
});
