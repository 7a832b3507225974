import { UPLOAD_CONTENT_TYPES, uploadedMediaSchema } from '../../core/media/media.schema.js';
import type { MediaService } from '../../core/media/media.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

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
  ];
}
