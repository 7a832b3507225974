interface Waiting<I, R> {
  item: I;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/**
 * Items written by one statement for many (PostgreSQL, where every statement is a round trip: the socket write
 * and the database's wake-up cost more than the rows). `write` takes items of one kind and gives each its result,
 * in order, in one statement, atomic by itself. Items that arrive in one turn of the event loop, or while a
 * statement is out, go together in the next one; an item alone (an idle service) goes at once, by itself.
 *
 * A statement that fails fails as a whole, so its items are written again one by one: one item's error (or a
 * deadlock between two processes' statements, which PostgreSQL breaks by failing one) then fails that item alone.
 */
export function rowBatches<I, R>(write: (items: I[]) => Promise<R[]>, maxBatch = 64): (item: I) => Promise<R> {
  const queue: Waiting<I, R>[] = [];
  let out = false;

  async function send(batch: Waiting<I, R>[]): Promise<void> {
    try {
      const results = await write(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i] as R));
      return;
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
    }
    await Promise.all(batch.map((w) => write([w.item]).then((r) => w.resolve(r[0] as R), w.reject)));
  }

  async function drain(): Promise<void> {
    try {
      while (queue.length > 0) await send(queue.splice(0, maxBatch));
    } finally {
      out = false;
    }
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (out) return;
      out = true;
      setImmediate(() => void drain());
    });
}
