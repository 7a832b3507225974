import { contentIdSchema, updateContentInputSchema, updatedContentSchema } from '../src/core/contents/contents.schema.js';
import { validationError } from '../src/core/errors.js';
import { idempotencyKeySchema } from '../src/core/idempotency/idempotency.schema.js';
import { dashboardLink, defineTool, listed, whenOf } from './define-tool.js';

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
    'Edits a draft or scheduled content: send only the fields to change (null clears an optional one; brand_id cannot change); the result is checked again as at creation. ' +
    'A platform with its own text in overrides keeps it when text changes (listed in kept_overrides); overrides is replaced as a whole. ' +
    'Timing, at most one: publish_at (reschedule; a draft becomes scheduled), queue: true (next free queue slot), draft: true (back to draft); without them the time stays. ' +
    'Time zone: publish_at with an offset is that instant; without one it is local time in time_zone (IANA, e.g. the user\'s zone), else the zone the content was scheduled in, else the brand queue\'s, else UTC. ' +
    'Times are checked: past, over 365 days ahead or an unknown zone is validation_failed. Free: charges nothing (posts are charged when publishing starts). ' +
    'Errors: content_not_editable (with status) once publishing started or the content was canceled; not_found; idempotency_conflict; validation_failed (also when nothing is sent to change); the creation checks.',
  // Destructive: the fields sent overwrite the stored ones (null clears one). Not idempotent: queue: true takes the
  // next free slot after the one the content holds. Open world: a draft given a time (or the queue) will be
  // published to the networks at it.
  permission: 'contents.draft',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  inputSchema,
  outputSchema: updatedContentSchema,
  summary: (c) =>
    `Updated post ${c.content_id}: ${c.status}${c.status === 'scheduled' ? ` for ${whenOf(c) ?? 'its time'}${c.queued ? ' (a queue slot)' : ''}` : ''} on ${listed(c.target_platforms)}.` +
    c.kept_overrides.map((k) => ` ${k.platform_slug} keeps its own ${listed(k.fields)} (change overrides to edit it).`).join(''),
  links: (c) => [dashboardLink.content(c.content_id, c.status)],
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
