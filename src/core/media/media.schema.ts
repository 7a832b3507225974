import { z } from 'zod';

export const UPLOAD_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'video/mp4', 'video/quicktime', 'video/webm'] as const;

export const uploadedMediaSchema = z
  .object({
    id: z.string().describe('Media id (media_…), usable as `media: [{media_id}]` in content.'),
    content_type: z.enum(UPLOAD_CONTENT_TYPES),
    size_bytes: z.number().int(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'UploadedMedia' });
export type UploadedMedia = z.infer<typeof uploadedMediaSchema>;
