import type { CompiledQuery, Kysely, QueryResult } from 'kysely';
import type { Database } from '../schema.js';

/**
 * A query built and compiled once per dialect, then run with each call's parameters. For the statements of every
 * authenticated read and every content creation: building kysely's node tree, freezing and compiling it cost more
 * than the indexed statements themselves. `build` makes the query with placeholder values; the call's parameters
 * must come in the order its placeholders do.
 *
 * The cache is keyed by the handle's dialect adapter, which a transaction (and a savepoint in it) shares with the
 * handle it came from, so work inside transactions reuses it too. The SQL depends only on the dialect: this
 * service adds no kysely plugins.
 */
export function compiledOnce<Row>(build: (db: Kysely<Database>) => { compile(): CompiledQuery<Row> }) {
  const byDialect = new WeakMap<object, CompiledQuery<Row>>();
  return async (db: Kysely<Database>, parameters: readonly unknown[]): Promise<QueryResult<Row>> => {
    const key = db.getExecutor().adapter;
    let compiled = byDialect.get(key);
    if (compiled === undefined) {
      compiled = build(db).compile();
      if (compiled.parameters.length !== parameters.length) throw new Error(`compiled query takes ${compiled.parameters.length} parameters, given ${parameters.length}`);
      byDialect.set(key, compiled);
    }
    return db.executeQuery<Row>({ ...compiled, parameters });
  };
}

/**
 * `compiledOnce` for statements that write a set of columns chosen by the caller (a job step writes one of a
 * handful): compiled once per set of columns. The call gives the values by column (undefined ones are left out)
 * and then the parameters that follow them, in the order of their placeholders.
 */
export function compiledPerColumns<Row>(build: (columns: readonly string[]) => (db: Kysely<Database>) => { compile(): CompiledQuery<Row> }) {
  const byColumns = new Map<string, ReturnType<typeof compiledOnce<Row>>>();
  return (db: Kysely<Database>, values: Readonly<Record<string, unknown>>, rest: readonly unknown[]): Promise<QueryResult<Row>> => {
    const columns = Object.keys(values).filter((c) => values[c] !== undefined);
    const key = columns.join(',');
    let statement = byColumns.get(key);
    if (statement === undefined) {
      statement = compiledOnce(build(columns));
      byColumns.set(key, statement);
    }
    return statement(db, [...columns.map((c) => values[c]), ...rest]);
  };
}
