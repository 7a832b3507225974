import { mediaIdSchema, mediaListQuerySchema, mediaListSchema, UPLOAD_CONTENT_TYPES, uploadedMediaSchema } from '../../core/media/media.schema.js';
import type { MediaService } from '../../core/media/media.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const mediaParams = workspaceParams.extend({ mediaId: mediaIdSchema });

export function mediaRoutes(media: MediaService) {
  return [
    defineRoute({
      operationId: 'uploadMedia',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/media',
      tag: 'Media',
      summary: 'Upload a media file',
      description:
        'Send the file itself as the body with its Content-Type; an empty body is refused with validation_failed. It is streamed to storage and counted on the media_storage meter (bytes). Use the returned id as `media: [{media_id}]` when creating content.',
      auth: 'bearer',
      params: workspaceParams,
      rawBody: { contentTypes: UPLOAD_CONTENT_TYPES, description: 'The file bytes.' },
      success: { status: 201, description: 'Stored.', schema: uploadedMediaSchema },
      example: { response: { id: 'media_9b2d5f8h1k4m7p0r3t6v', content_type: 'image/jpeg', size_bytes: 482113, created_at: '2026-02-27T16:18:44.000Z' } },
      errors: ['validation_failed', 'limit_reached'],
      handle: ({ principal, params, header, raw }) => media.upload(principal, params.wsId, header('content-type') ?? '', raw!),
    }),
    defineRoute({
      operationId: 'listMedia',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/media',
      tag: 'Media',
      summary: 'List uploads (the media library)',
      description:
        'Uploads newest first, each with its type, size, creation time, a signed address of the file valid for 24 hours (`url`: a thumbnail for images) and the contents that use it (`used_by`). Cursor-paginated (limit, cursor, next_cursor). Free.',
      auth: 'bearer',
      params: workspaceParams,
      query: mediaListQuerySchema,
      success: { status: 200, description: 'A page of uploads.', schema: mediaListSchema },
      errors: ['validation_failed'],
      handle: ({ principal, params, query }) => media.list(principal, params.wsId, query),
    }),
    defineRoute({
      operationId: 'deleteMedia',
      method: 'delete',
      path: '/api/v1/workspaces/{wsId}/media/{mediaId}',
      tag: 'Media',
      summary: 'Delete an upload',
      description:
        'Deletes the file and gives its bytes back to the media_storage meter. Refused with 409 media_in_use while a draft, scheduled or publishing content uses it (the body lists them): delete or edit those first. Finished contents keep their record; a retry of a failed one then fails on the missing file.',
      auth: 'bearer',
      params: mediaParams,
      success: { status: 204, description: 'Deleted.' },
      errors: ['not_found', 'media_in_use'],
      handle: ({ principal, params }) => media.remove(principal, params.wsId, params.mediaId),
    }),
  ];
}
