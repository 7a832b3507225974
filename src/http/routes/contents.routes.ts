import { z } from 'zod';
import {
  contentIdSchema,
  contentListQuerySchema,
  contentListSchema,
  contentSchema,
  createContentInputSchema,
  createdContentSchema,
  previewSchema,
  contentActionInputSchema,
  retryInputSchema,
  retryResultSchema,
  updateContentInputSchema,
  updatedContentSchema,
} from '../../core/contents/contents.schema.js';
import type { ContentsService } from '../../core/contents/contents.service.js';
import { idempotencyKeySchema, parseIdempotencyKey } from '../../core/idempotency/idempotency.schema.js';
import type { IdempotentResult } from '../../core/idempotency/idempotency.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const contentParams = workspaceParams.extend({ contentId: contentIdSchema });

const createQuery = z.strictObject({
  dry_run: z
    .enum(['true', 'false'])
    .optional()
    .describe('true: run every check and answer 200 with what would happen; nothing is created, charged or published.'),
});

const idempotencyHeaders = z.object({ 'Idempotency-Key': idempotencyKeySchema.optional() });

/** Answers an idempotent outcome: the replay header, then the value or the first error again. */
function replay<T>(result: IdempotentResult<T>, setHeader: (name: string, value: string) => void): T {
  if (result.replayed) setHeader('Idempotent-Replayed', 'true');
  if (!result.outcome.ok) throw result.outcome.error;
  return result.outcome.value;
}

const exampleJobs: z.output<typeof createdContentSchema>['jobs'] = [
  { job_id: 'job_8c1v4q7t2m9x3k5zb0nf', platform_slug: 'instagram', connection_id: 'conn_7t2mz4q8kx1vb9c3nfa5', status: 'scheduled' },
  { job_id: 'job_3n6w9p2r5t8v1x4z7b0c', platform_slug: 'linkedin', connection_id: 'conn_2b5e8h1k4n7q0t3w6y9a', status: 'scheduled' },
];

/** One scheduled content as GET answers it: what the reference shows for create, list and get. */
const exampleContent: z.output<typeof contentSchema> = {
  content_id: '0f7c2a9e-3b41-4d8e-9a6f-5c2e1d7b8a90',
  brand_id: 'brand_4k8xq2m7tv9c1zb3nfa0',
  content_type: 'photo',
  status: 'scheduled',
  target_platforms: ['instagram', 'linkedin'],
  publish_at: '2026-03-02T14:00:00.000Z',
  time_zone: 'America/New_York',
  local_publish_at: '2026-03-02T09:00',
  queued: false,
  text: 'Spring menu starts Monday: three new dishes, one old favourite back.',
  title: null,
  thread: null,
  media: [{ media_id: 'media_9q2w4e6r8t0y1u3i5o7p' }],
  overrides: { linkedin: { text: 'Spring menu starts Monday. Book a table for your team lunch.' } },
  targets: [
    { platform_slug: 'instagram', text: 'Spring menu starts Monday: three new dishes, one old favourite back.', title: null, own_text: false, own_title: false },
    { platform_slug: 'linkedin', text: 'Spring menu starts Monday. Book a table for your team lunch.', title: null, own_text: true, own_title: false },
  ],
  created_at: '2026-02-27T16:20:05.000Z',
  updated_at: '2026-02-27T16:20:05.000Z',
  completed_at: null,
  approval_overdue: false,
  jobs: exampleJobs.map((job) => ({
    ...job,
    error_code: null,
    error_message: null,
    external_post_url: null,
    notice: null,
    previous_status: null,
    attempts: 0,
    created_at: '2026-02-27T16:20:05.000Z',
    updated_at: '2026-02-27T16:20:05.000Z',
    published_at: null,
  })),
};

export function contentRoutes(contents: ContentsService) {
  return [
    defineRoute({
      operationId: 'createContent',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/contents',
      tag: 'Contents',
      summary: 'Create content: publish now, schedule, queue or save a draft',
      description:
        'Checks everything first (nothing is stored or charged on failure), then stores the content. Without a timing it publishes now: one job per target platform is queued. ' +
        'With `publish_at` it is scheduled (status `scheduled`, jobs `scheduled`) and starts at that instant; with `queue: true` it takes the brand\'s next free queue slot; with `draft: true` it is saved as a draft (no jobs). ' +
        'Charging happens when publishing starts, never at scheduling: then it counts 1 on criacao_de_conteudos and 1 per platform on publicacoes, in the cycle it publishes in; a scheduled content that cannot be paid at its time fails with the refusal\'s code on each job and a content.failed event. ' +
        'With `Idempotency-Key`, the same key and body replay the first answer ' +
        '(header `Idempotent-Replayed: true`); a different body answers 409 idempotency_conflict. Keys are kept 24 hours. ' +
        'With `?dry_run=true` the answer is 200 with a preview.',
      auth: 'bearer',
      params: workspaceParams,
      query: createQuery,
      headers: idempotencyHeaders,
      body: createContentInputSchema,
      success: { status: 201, description: 'Created: publishing (jobs queued), scheduled (jobs wait for publish_at) or draft.', schema: createdContentSchema },
      example: {
        request: {
          brand_id: 'brand_4k8xq2m7tv9c1zb3nfa0',
          content_type: 'photo',
          target_platforms: ['instagram', 'linkedin'],
          text: 'Spring menu starts Monday: three new dishes, one old favourite back.',
          media: [{ url: 'https://cdn.example.com/menu/spring-2026.jpg' }],
          publish_at: '2026-03-02T09:00',
          time_zone: 'America/New_York',
        },
        response: {
          content_id: exampleContent.content_id,
          status: 'scheduled',
          publish_at: exampleContent.publish_at,
          time_zone: exampleContent.time_zone,
          local_publish_at: exampleContent.local_publish_at,
          queued: false,
          created_at: exampleContent.created_at,
          jobs: exampleJobs,
        },
      },
      alternatives: [{ status: 200, description: 'Preview (dry_run=true).', schema: previewSchema }],
      errors: ['not_found', 'limit_reached', 'saldo_insuficiente', 'saldo_fragmentado', 'lote_vencido', 'operacao_sem_preco', 'idempotency_conflict', 'connections_required', 'platform_not_supported', 'media_too_large', 'media_unsupported_format', 'caption_too_long'],
      handle: async ({ principal, params, query, body, header, setHeader, setStatus }) => {
        const caller = principal;
        if (query.dry_run === 'true') {
          setStatus(200);
          return contents.preview(caller, params.wsId, body);
        }
        const key = parseIdempotencyKey(header('idempotency-key'), 'Idempotency-Key');
        return replay(await contents.create(caller, params.wsId, body, key), setHeader);
      },
    }),
    defineRoute({
      operationId: 'listContents',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/contents',
      tag: 'Contents',
      summary: 'List contents',
      description:
        'Newest first; pass next_cursor as cursor for the next page. With `from` and/or `to` it is the calendar feed: contents whose publish_at falls in [from, to), earliest first (for example `?status=scheduled&from=…&to=…`).',
      auth: 'bearer',
      params: workspaceParams,
      query: contentListQuerySchema,
      success: { status: 200, description: 'A page of contents with their jobs.', schema: contentListSchema },
      example: { response: { data: [exampleContent], next_cursor: null } },
      handle: ({ principal, params, query }) => contents.list(principal, params.wsId, query),
    }),
    defineRoute({
      operationId: 'getContent',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/contents/{contentId}',
      tag: 'Contents',
      summary: 'Get a content and its jobs',
      auth: 'bearer',
      params: contentParams,
      success: { status: 200, description: 'The content.', schema: contentSchema },
      example: { response: exampleContent },
      errors: ['not_found'],
      handle: ({ principal, params }) => contents.get(principal, params.wsId, params.contentId),
    }),
    defineRoute({
      operationId: 'updateContent',
      method: 'patch',
      path: '/api/v1/workspaces/{wsId}/contents/{contentId}',
      tag: 'Contents',
      summary: 'Edit a draft or scheduled content',
      description:
        'Changes text, title, media, targets, per-network overrides or the time (`publish_at`, `queue`, `draft`) of a draft or scheduled content; the result is checked again as at creation and its jobs are rebuilt. ' +
        'Charges nothing. Once publishing has started (or the content was canceled) it answers 409 content_not_editable. `Idempotency-Key` replays the first answer.',
      auth: 'bearer',
      params: contentParams,
      headers: idempotencyHeaders,
      body: updateContentInputSchema,
      success: { status: 200, description: 'The content as edited, with the platforms that kept their own text.', schema: updatedContentSchema },
      errors: ['not_found', 'content_not_editable', 'idempotency_conflict', 'connections_required', 'platform_not_supported', 'media_too_large', 'media_unsupported_format', 'caption_too_long'],
      handle: async ({ principal, params, body, header, setHeader }) =>
        replay(await contents.update(principal, params.wsId, params.contentId, body, parseIdempotencyKey(header('idempotency-key'), 'Idempotency-Key')), setHeader),
    }),
    defineRoute({
      operationId: 'cancelContent',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/contents/{contentId}/cancel',
      tag: 'Contents',
      summary: 'Cancel a draft or scheduled content',
      description:
        'The content will never publish; its queue slot is free at once; nothing was charged for it. Canceling a canceled content answers it again. Once publishing has started it answers 409 content_not_editable.',
      auth: 'bearer',
      params: contentParams,
      headers: idempotencyHeaders,
      body: contentActionInputSchema.optional(),
      success: { status: 200, description: 'The canceled content.', schema: contentSchema },
      errors: ['not_found', 'content_not_editable', 'idempotency_conflict'],
      handle: async ({ principal, params, header, setHeader }) =>
        replay(await contents.cancel(principal, params.wsId, params.contentId, parseIdempotencyKey(header('idempotency-key'), 'Idempotency-Key')), setHeader),
    }),
    defineRoute({
      operationId: 'publishContentNow',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/contents/{contentId}/publish',
      tag: 'Contents',
      summary: 'Publish a draft or scheduled content now',
      description:
        'Starts publishing at once (a draft is checked again first) and charges it as a content publishing now. Once publishing has started it answers 409 content_not_editable.',
      auth: 'bearer',
      params: contentParams,
      headers: idempotencyHeaders,
      body: contentActionInputSchema.optional(),
      success: { status: 200, description: 'The content, publishing.', schema: contentSchema },
      errors: ['not_found', 'content_not_editable', 'idempotency_conflict', 'limit_reached', 'saldo_insuficiente', 'saldo_fragmentado', 'lote_vencido', 'operacao_sem_preco', 'connections_required', 'platform_not_supported', 'media_too_large', 'media_unsupported_format', 'caption_too_long'],
      handle: async ({ principal, params, header, setHeader }) =>
        replay(await contents.publishNow(principal, params.wsId, params.contentId, parseIdempotencyKey(header('idempotency-key'), 'Idempotency-Key')), setHeader),
    }),
    defineRoute({
      operationId: 'retryContent',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/contents/{contentId}/retry',
      tag: 'Contents',
      summary: 'Retry failed targets',
      description:
        'Re-queues the failed jobs whose error the caller can retry. Confirmation failures (confirmacao_esgotada, confirmacao_indisponivel, post_inexistente) are left alone because their post may be live, unless `force: true`. Jobs whose connection is expired or inactive are never re-queued: they are listed in `skipped`, to reconnect first. Counted on publicacoes per re-queued job, nothing for skipped ones.',
      auth: 'bearer',
      params: contentParams,
      body: retryInputSchema,
      success: { status: 200, description: 'The jobs re-queued (possibly none).', schema: retryResultSchema },
      errors: ['not_found', 'limit_reached'],
      handle: ({ principal, params, body }) => contents.retry(principal, params.wsId, params.contentId, body),
    }),
  ];
}
