import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * A query built and compiled once per database handle, then run with each call's parameters. For the statements of
 * every authenticated read (the key lookup, the content, its jobs): building kysely's node tree, freezing and
 * compiling it cost more than the indexed lookups themselves. `build` makes the query with placeholder values;
 * the call's parameters must come in the order its placeholders do. A transaction is a handle of its own, so
 * inside one the query is compiled for that transaction only.
 */
export function compiledOnce<Row>(build: (db: Kysely<Database>) => { compile(): CompiledQuery<Row> }) {
  const byHandle = new WeakMap<Kysely<Database>, CompiledQuery<Row>>();
  return async (db: Kysely<Database>, parameters: readonly unknown[]): Promise<Row[]> => {
    let compiled = byHandle.get(db);
    if (compiled === undefined) {
      compiled = build(db).compile();
      if (compiled.parameters.length !== parameters.length) throw new Error(`compiled query takes ${compiled.parameters.length} parameters, given ${parameters.length}`);
      byHandle.set(db, compiled);
    }
    return (await db.executeQuery<Row>({ ...compiled, parameters })).rows;
  };
}
