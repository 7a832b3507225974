import type { PublishRequest } from '../adapter.js';

/**
 * The texts of the posts a job publishes, in order: its chain whenever the request carries one, else the single
 * post's (possibly empty) text. A chain is not only a `thread` content: a long `text` (or a long caption) that
 * `thread_split: "auto"` split on a short-post network keeps its content type and arrives with `thread` set, so
 * the chain is read from `thread` alone, never inferred from the content type.
 */
export function postTexts(req: Pick<PublishRequest, 'text' | 'thread'>): string[] {
  return req.thread && req.thread.length > 0 ? req.thread : [req.text ?? ''];
}
