import { z } from 'zod';
import {
  contentIdSchema,
  contentListQuerySchema,
  contentListSchema,
  contentSchema,
  createContentInputSchema,
  createdContentSchema,
  previewSchema,
  retryInputSchema,
  retryResultSchema,
} from '../../core/contents/contents.schema.js';
import type { ContentsService } from '../../core/contents/contents.service.js';
import { idempotencyKeySchema, parseIdempotencyKey } from '../../core/idempotency/idempotency.schema.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const contentParams = workspaceParams.extend({ contentId: contentIdSchema });

const createQuery = z.strictObject({
  dry_run: z
    .enum(['true', 'false'])
    .optional()
    .describe('true: run every check and answer 200 with what would happen; nothing is created, charged or published.'),
});

export function contentRoutes(contents: ContentsService) {
  return [
    defineRoute({
      operationId: 'createContent',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/contents',
      tag: 'Contents',
      summary: 'Create and publish content',
      description:
        'Checks everything first (nothing is stored or charged on failure), then stores the content and queues one job per target platform. ' +
        'Counts 1 on criacao_de_conteudos and 1 per platform on publicacoes. With `Idempotency-Key`, the same key and body replay the first answer ' +
        '(header `Idempotent-Replayed: true`); a different body answers 409 idempotency_conflict. Keys are kept 24 hours. ' +
        'With `?dry_run=true` the answer is 200 with a preview.',
      auth: 'bearer',
      params: workspaceParams,
      query: createQuery,
      headers: z.object({
        'Idempotency-Key': idempotencyKeySchema.optional(),
      }),
      body: createContentInputSchema,
      success: { status: 201, description: 'Created; jobs are queued.', schema: createdContentSchema },
      alternatives: [{ status: 200, description: 'Preview (dry_run=true).', schema: previewSchema }],
      errors: ['not_found', 'limit_reached', 'saldo_insuficiente', 'saldo_fragmentado', 'lote_vencido', 'operacao_sem_preco', 'idempotency_conflict', 'connections_required', 'platform_not_supported', 'media_too_large', 'caption_too_long'],
      handle: async ({ principal, params, query, body, header, setHeader, setStatus }) => {
        const caller = principal;
        if (query.dry_run === 'true') {
          setStatus(200);
          return contents.preview(caller, params.wsId, body);
        }
        const key = parseIdempotencyKey(header('idempotency-key'), 'Idempotency-Key');
        const result = await contents.create(caller, params.wsId, body, key);
        if (result.replayed) setHeader('Idempotent-Replayed', 'true');
        if (!result.outcome.ok) throw result.outcome.error;
        return result.outcome.value;
      },
    }),
    defineRoute({
      operationId: 'listContents',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/contents',
      tag: 'Contents',
      summary: 'List contents',
      description: 'Newest first; pass next_cursor as cursor for the next page.',
      auth: 'bearer',
      params: workspaceParams,
      query: contentListQuerySchema,
      success: { status: 200, description: 'A page of contents with their jobs.', schema: contentListSchema },
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
      errors: ['not_found'],
      handle: ({ principal, params }) => contents.get(principal, params.wsId, params.contentId),
    }),
    defineRoute({
      operationId: 'retryContent',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/contents/{contentId}/retry',
      tag: 'Contents',
      summary: 'Retry failed targets',
      description:
        'Re-queues the failed jobs whose error the caller can retry. Confirmation failures (confirmacao_esgotada, confirmacao_indisponivel, post_inexistente) are left alone because their post may be live, unless `force: true`. Counted on publicacoes.',
      auth: 'bearer',
      params: contentParams,
      body: retryInputSchema,
      success: { status: 200, description: 'The jobs re-queued (possibly none).', schema: retryResultSchema },
      errors: ['not_found', 'limit_reached'],
      handle: ({ principal, params, body }) => contents.retry(principal, params.wsId, params.contentId, body),
    }),
  ];
}
