import { z } from 'zod';
import type { ContentPlan } from '../contents/content-plan.js';
import { tiktokSettingsSchema } from '../contents/contents.schema.js';

/**
 * The stored form of a content's request (`contents.request`): the validated plan minus the connection rows.
 * Written once when the content is created; read back to render the content and, by the publisher, to build
 * each job's request. One schema for both readers, so a row that does not hold this shape is an error at the
 * read, not a cast that lets `undefined` travel on.
 */
export const storedRequestSchema = z.object({
  text: z.string().nullable(),
  title: z.string().nullable(),
  media: z.array(
    z.object({
      url: z.string().nullable(),
      mediaId: z.string().nullable(),
      /** null when the address did not report a size: the cap for such addresses is applied when publishing. */
      sizeBytes: z.number().nullable(),
      storagePath: z.string().nullable(),
      /** The media type (an upload's, or an address's image/video type); absent from requests stored before it was kept. */
      contentType: z.string().nullable().default(null),
    }),
  ),
  targets: z.array(
    z.object({
      platform: z.string(),
      connectionId: z.string(),
      text: z.string().nullable(),
      title: z.string().nullable(),
      thread: z.array(z.string()).nullable(),
      /** The creator's TikTok choices (absent in requests stored before they were asked for). */
      tiktok: tiktokSettingsSchema.nullable().optional(),
    }),
  ),
});

export type StoredRequest = z.infer<typeof storedRequestSchema>;

/** The JSON stored in `contents.request` for a checked plan. */
export function storeRequest(plan: ContentPlan): string {
  const stored: StoredRequest = {
    text: plan.text,
    title: plan.title,
    media: plan.media,
    targets: plan.targets.map((t) => ({ platform: t.platform, connectionId: t.connection.id, text: t.text, title: t.title, thread: t.thread, tiktok: t.tiktok })),
  };
  return JSON.stringify(stored);
}

/**
 * Reads `contents.request` back.
 * @throws Error when the column is not JSON or not a stored request (a bug or a damaged row, never user input).
 */
export function parseStoredRequest(json: string): StoredRequest {
  return storedRequestSchema.parse(JSON.parse(json));
}
