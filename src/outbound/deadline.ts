/**
 * A time limit for outbound work that holds on Node 20. There, a `fetch` given `AbortSignal.any([...])` never
 * ends if a garbage collection runs while it waits: the composed signal holds its sources weakly and the timer of
 * `AbortSignal.timeout` holds its signal weakly, so the abort is lost (nodejs/undici#4068, nodejs/node#55428).
 * Here a timer aborts a controller it holds strongly, and the work is also raced against that moment, so the
 * limit holds even where an abort does not reach the socket.
 *
 * Rejects with the signal's reason when the time runs out (a `TimeoutError`, as `AbortSignal.timeout` gives) or
 * when `parent` aborts first (the parent's reason); otherwise settles as `work` does.
 */
export async function withinDeadline<T>(ms: number, work: (signal: AbortSignal) => Promise<T>, parent?: AbortSignal): Promise<T> {
  const controller = new AbortController();
  const { signal } = controller;
  const ended = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  // Whichever settles the race, this promise must not count as an unhandled rejection afterwards.
  ended.catch(() => undefined);
  const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')), ms);
  const follow = () => controller.abort(parent?.reason);
  if (parent?.aborted) follow();
  else parent?.addEventListener('abort', follow, { once: true });
  try {
    return await Promise.race([work(signal), ended]);
  } finally {
    clearTimeout(timer);
    parent?.removeEventListener('abort', follow);
  }
}
