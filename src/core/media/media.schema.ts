import { z } from 'zod';
import { CONTENT_STATUSES } from '../../vocabulary/content-statuses.js';

export const UPLOAD_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'video/mp4', 'video/quicktime', 'video/webm'] as const;

/** An upload's id, wherever a door takes one. */
export const mediaIdSchema = z.string().describe('Media id (media_…), as returned by the upload or the media list.');

export const uploadedMediaSchema = z
  .object({
    id: z.string().describe('Media id (media_…), usable as `media: [{media_id}]` in content.'),
    content_type: z.enum(UPLOAD_CONTENT_TYPES),
    size_bytes: z.number().int(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'UploadedMedia' });
export type UploadedMedia = z.infer<typeof uploadedMediaSchema>;

/** Content statuses in which a content still needs its media: deleting an upload they use is refused. */
export const MEDIA_NEEDED_BY = ['draft', 'pending_approval', 'changes_requested', 'scheduled', 'publishing'] as const satisfies readonly (typeof CONTENT_STATUSES)[number][];

export const mediaItemSchema = uploadedMediaSchema
  .extend({
    url: z
      .string()
      .describe('A signed address of the file itself, valid for 24 hours: use it as a thumbnail or to download the file. Ask the list again for a fresh one.'),
    used_by: z
      .array(z.object({ content_id: z.string().describe('A content whose media list names this upload.'), status: z.enum(CONTENT_STATUSES) }))
      .describe('Contents using this upload, newest first. While one is draft, scheduled or publishing, deleting the upload is refused (409 media_in_use).'),
  })
  .meta({ id: 'LibraryMedia' });
export type MediaItem = z.infer<typeof mediaItemSchema>;

export const mediaListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('How many uploads per page (1–100).'),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page.'),
});
export type MediaListQuery = z.infer<typeof mediaListQuerySchema>;

export const mediaListSchema = z
  .object({ data: z.array(mediaItemSchema).describe('Uploads, newest first.'), next_cursor: z.string().nullable().describe('Pass as cursor for older uploads; null on the last page.') })
  .meta({ id: 'LibraryMediaList' });
export type MediaList = z.infer<typeof mediaListSchema>;

/** Importing a file into the library from an address instead of sending its bytes (MCP import_media_from_url). */
export const importMediaInputSchema = z.strictObject({
  url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .describe(
      'Public https address of the file itself (not a web page showing it): an image (JPEG, PNG, WebP, GIF) or a video (MP4, MOV, WebM), as the address answers in its Content-Type.',
    ),
});
export type ImportMediaInput = z.infer<typeof importMediaInputSchema>;
