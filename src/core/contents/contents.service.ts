import { contentCreation } from './create.js';
import { contentLifecycle } from './lifecycle.js';
import { contentPreview } from './preview.js';
import { contentReads } from './read.js';
import { contentReview } from './review.js';
import type { ContentsDeps } from './steps.js';
import { contentUpdate } from './update.js';

export type ContentsService = ReturnType<typeof createContentsService>;

/**
 * The contents service: each operation lives in its own file (create, update, lifecycle, preview, read, review), all built
 * over the same dependencies; this composes them into the one service the container wires and the doors call.
 */
export function createContentsService(deps: ContentsDeps) {
  return {
    ...contentCreation(deps),
    ...contentUpdate(deps),
    ...contentLifecycle(deps),
    ...contentPreview(deps),
    ...contentReads(deps),
    ...contentReview(deps),
  };
}
