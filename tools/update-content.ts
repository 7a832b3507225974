import { contentIdSchema, contentSchema, updateContentInputSchema } from '../src/core/contents/contents.schema.js';
import { validationError } from '../src/core/errors.js';
import { idempotencyKeySchema } from '../src/core/idempotency/idempotency.schema.js';
import { defineTool } from './define-tool.js';

const inputSchema = updateContentInputSchema.extend({
  content_id: contentIdSchema,
  idempotency_key: idempotencyKeySchema
    .optional()
    .describe('Unique per logical edit (e.g. a UUID). Calling again with the same key and the same changes returns the first answer; different changes under it fail with idempotency_conflict.'),
});

export const updateContentTool = defineTool({
  name: 'update_content',
  title: 'Edit or reschedule a draft or scheduled content',
  description:
    'Changes a content that is still a draft or scheduled: text, title, media, targets, per-platform overrides, modo, or its time. Send only the fields to change; null clears an optional one; brand_id cannot change. ' +
    'The result is checked again as at creation (caption_too_long, platform_not_supported, media_too_large, connections_required, validation_failed…). ' +
    'Timing, at most one of: publish_at (reschedule; a draft becomes scheduled), queue: true (the brand\'s next free queue slot), draft: true (back to draft, its time and queue slot let go); without them the time stays. ' +
    'publish_at with an offset (2026-11-24T09:00:00-05:00, or Z) is that instant; without one (2026-11-24T09:00) it is a local wall-clock time in time_zone (an IANA name, e.g. the user\'s zone), ' +
    'else in the zone the content was scheduled in, else the brand queue\'s zone, else UTC. Times are checked: a past time, one more than 365 days ahead or an unknown zone answers validation_failed naming publish_at or time_zone. ' +
    'Answers the content with its publish_at (UTC), time_zone and local_publish_at to confirm with the user. Charges nothing (the post is charged when publishing starts). ' +
    'Errors: content_not_editable (with the content\'s status) once publishing has started, finished or the content was canceled; not_found for an unknown content_id; idempotency_conflict; validation_failed (also when nothing to change is sent).',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  inputSchema,
  outputSchema: contentSchema,
  async handle({ content_id, idempotency_key, ...fields }, { principal, services }) {
    // The id and key are always present, so the core schema's "at least one change" rule is checked on the
    // changes alone, as the REST body is.
    const patch = updateContentInputSchema.safeParse(fields);
    if (!patch.success) throw validationError(patch.error);
    const result = await services.contents.update(principal, principal.workspaceId, content_id, patch.data, idempotency_key);
    if (!result.outcome.ok) throw result.outcome.error;
    return result.outcome.value;
  },
});
