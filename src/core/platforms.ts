import { z } from 'zod';
import { TEXT_COUNTINGS } from '../vocabulary/text-length.js';
import { CONTENT_TYPES, PLATFORM_SLUGS, type PlatformSlug, PLATFORMS, UNKNOWN_SIZE_MEDIA_CAP_BYTES } from '../vocabulary/platforms.js';

export const platformSchema = z
  .object({
    slug: z.enum(PLATFORM_SLUGS),
    name: z.string(),
    kind: z.string().describe('The kind of network (spec 1).'),
    content_types: z.array(z.enum(CONTENT_TYPES)),
    limits: z.object({
      text_max_chars: z.number().int().describe('Longest post text, counted as `text_counting` says.'),
      photo_text_max_chars: z
        .number()
        .int()
        .nullable()
        .describe("Longest text of a photo post where it differs from text_max_chars (TikTok: a photo post's description 4,000, a video's caption 2,200); null where it does not."),
      title_max_chars: z.number().int().nullable(),
      thread_max_posts: z.number().int().nullable(),
      photo_max_bytes: z.number().int().nullable(),
      video_max_bytes: z.number().int().nullable(),
      daily_posts: z.number().int().nullable().describe("The network's own approximate daily cap per account."),
      photo_types: z
        .array(z.string())
        .nullable()
        .describe('The only image types (MIME) a photo post may carry, where the network refuses some common ones (Instagram: JPEG only); null: none is refused at creation. A photo of another type is refused at creation with media_unsupported_format.'),
      unknown_size_media_cap_bytes: z.number().int().describe('Service cap for media whose address does not report a size.'),
    }),
    text_counting: z
      .enum(TEXT_COUNTINGS)
      .describe(
        "How the network counts text: Unicode code points; graphemes (what a reader sees as one character); X's weighting (most scripts outside Latin and every emoji count 2, every link 23); Mastodon's (graphemes, every link 23, a mention of another server's account by its local part); or UTF-16 code units (TikTok: an emoji outside the basic plane counts 2). Titles are counted the same way.",
      ),
    connect: z
      .enum(['oauth', 'instance_oauth', 'app_password'])
      .describe("How a live account is connected: the network's OAuth; OAuth on the user's own server (give `instance`); or the account's app password."),
    title_required: z.boolean(),
    sandbox_available: z.boolean(),
    live_available: z.boolean().describe('Whether live connections (network OAuth) can be made in this installation.'),
  })
  .meta({ id: 'Platform' });

export const platformListSchema = z.object({ data: z.array(platformSchema) }).meta({ id: 'PlatformList' });
export type PlatformList = z.infer<typeof platformListSchema>;

/** The platform catalogue (GET /api/v1/platforms). */
export function listPlatforms(liveAvailable: (slug: PlatformSlug) => boolean): PlatformList {
  return {
    data: PLATFORM_SLUGS.map((slug) => {
      const p = PLATFORMS[slug];
      return {
        slug,
        name: p.name,
        kind: p.kind,
        content_types: [...p.contentTypes],
        limits: {
          text_max_chars: p.limits.textMaxChars,
          photo_text_max_chars: p.limits.photoTextMaxChars,
          title_max_chars: p.limits.titleMaxChars,
          thread_max_posts: p.limits.threadMaxPosts,
          photo_max_bytes: p.limits.mediaMaxBytes.photo,
          video_max_bytes: p.limits.mediaMaxBytes.video,
          daily_posts: p.limits.dailyPosts,
          photo_types: p.limits.photoTypes === null ? null : [...p.limits.photoTypes],
          unknown_size_media_cap_bytes: UNKNOWN_SIZE_MEDIA_CAP_BYTES,
        },
        text_counting: p.textCounting,
        connect: p.connect,
        title_required: p.titleRequired,
        sandbox_available: true,
        live_available: liveAvailable(slug),
      };
    }),
  };
}
