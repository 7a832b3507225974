import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Db } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { type TestDatabase, testDatabaseKinds } from '../support/databases.js';

const postgres = testDatabaseKinds().find((k) => k.name === 'postgres');

// CI always sets TEST_DATABASE_URL; without it there is no PostgreSQL to prepare statements on.
describe.skipIf(postgres === undefined)('PostgreSQL: repeated statements run as named prepared statements', () => {
  let database: TestDatabase;
  let db: Db;
  // One pooled connection, so what it has prepared is what the pool has.
  let k: Kysely<Database>;
  const prepared = async () =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(k)).rows.map((r) => r.statement);

  beforeAll(async () => {
    database = await postgres!.create();
    db = connect({ dialect: 'postgres', connectionString: database.url }, { poolSize: 1 });
    k = db.kysely;
    await sql`create table t (id integer primary key, v text not null)`.execute(k);
  });
  afterAll(async () => {
    await db.close();
    await database.drop();
  });

  it('a text with parameters is prepared from its third run on, and answers as before', async () => {
    await sql`insert into t (id, v) values (${1}, ${'one'}), (${2}, ${'two'})`.execute(k);
    const read = (id: number) => sql<{ v: string }>`select v from t where id = ${id} and v <> ${'read'}`.execute(k);
    expect((await read(1)).rows).toEqual([{ v: 'one' }]);
    expect((await read(2)).rows).toEqual([{ v: 'two' }]);
    expect((await prepared()).some((s) => s.includes("v <> $2"))).toBe(false);
    for (const id of [1, 2, 3, 1]) expect((await read(id)).rows).toEqual(id === 3 ? [] : [{ v: id === 1 ? 'one' : 'two' }]);
    expect((await prepared()).filter((s) => s.includes('v <> $2'))).toHaveLength(1);
  });

  it('statements without parameters stay unnamed', async () => {
    for (let i = 0; i < 5; i++) await sql`select count(*) from t where v <> 'none'`.execute(k);
    expect((await prepared()).some((s) => s.includes("'none'"))).toBe(false);
  });

  it('a prepared statement that fails reports its error each time and leaves the connection usable, in and out of transactions', async () => {
    const insert = (id: number) => sql`insert into t (id, v) values (${id}, ${'dup'})`.execute(k);
    await insert(10);
    for (let i = 0; i < 4; i++) await expect(insert(10)).rejects.toThrow(/duplicate key/);
    expect((await prepared()).filter((s) => s.includes("values ($1, $2)"))).toHaveLength(1);
    await expect(
      k.transaction().execute(async (tx) => {
        await sql`insert into t (id, v) values (${11}, ${'dup'})`.execute(tx);
        await sql`insert into t (id, v) values (${10}, ${'dup'})`.execute(tx);
      }),
    ).rejects.toThrow(/duplicate key/);
    // The transaction rolled back whole: 11 is not there, and the connection answers.
    expect((await sql<{ n: string }>`select count(*) as n from t where id = ${11}`.execute(k)).rows[0]?.n).toBe('0');
  });

  it("a table's columns changed by another process (a rolling deploy's migration): the statement runs again unnamed", async () => {
    const outside = (id: number) => sql<Record<string, unknown>>`select * from t where id = ${id} and 'outside' <> ${''}`.execute(k);
    const inside = (id: number) => sql<Record<string, unknown>>`select * from t where id = ${id} and 'inside' <> ${''}`.execute(k);
    for (let i = 0; i < 3; i++) {
      await outside(1);
      await inside(1);
    }
    expect((await prepared()).filter((s) => s.includes("'outside'") || s.includes("'inside'"))).toHaveLength(2);
    const other = connect({ dialect: 'postgres', connectionString: database.url });
    await sql`alter table t add column w text not null default 'new'`.execute(other.kysely);
    await other.close();
    // Out of a transaction: answered at once, with the new column.
    expect((await outside(1)).rows).toEqual([{ id: 1, v: 'one', w: 'new' }]);
    // In one: that transaction fails with PostgreSQL's own error, and the next runs unnamed.
    await expect(k.transaction().execute(async (tx) => sql`select * from t where id = ${1} and 'inside' <> ${''}`.execute(tx))).rejects.toThrow(
      /cached plan must not change result type/,
    );
    expect((await inside(1)).rows).toEqual([{ id: 1, v: 'one', w: 'new' }]);
    expect((await outside(2)).rows).toEqual([{ id: 2, v: 'two', w: 'new' }]);
  });

  it('DATABASE_PREPARED_STATEMENTS=false (a pooler in transaction mode): every statement runs unnamed', async () => {
    const plain = connect({ dialect: 'postgres', connectionString: database.url, preparedStatements: false }, { poolSize: 1 });
    try {
      for (let i = 0; i < 5; i++) expect((await sql<{ v: string }>`select v from t where id = ${1} and 'plain' <> ${''}`.execute(plain.kysely)).rows).toEqual([{ v: 'one' }]);
      expect((await sql<{ n: string }>`select count(*) as n from pg_prepared_statements`.execute(plain.kysely)).rows[0]?.n).toBe('0');
    } finally {
      await plain.close();
    }
  });

  it('at most 256 texts are named per process; the others run unnamed and answer as well', async () => {
    for (let n = 0; n < 300; n++) {
      for (let run = 0; run < 3; run++) {
        const r = await sql<{ v: string }>`select v from t where id = ${1} and ${sql.raw(String(n))} >= 0`.execute(k);
        expect(r.rows).toEqual([{ v: 'one' }]);
      }
    }
    const names = (await sql<{ n: string }>`select count(*) as n from pg_prepared_statements`.execute(k)).rows[0]?.n;
    expect(Number(names)).toBe(256);
  });
});
