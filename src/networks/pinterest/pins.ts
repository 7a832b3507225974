import type { NetworkFailure, PublishRequest } from '../adapter.js';
import { PLATFORMS } from '../../vocabulary/platforms.js';
import { failure } from '../kit/failure.js';
import { list, obj, str } from '../kit/json.js';
import { bodyOf, type Ctx, openFile, v5 } from './api.js';

/** What a pin is made of: its texts, how Pinterest gets the media, and whether it is a video (for the lookup). */

/** `multiple_image_urls` / `multiple_image_base64` take 2 to 5 images (PinMediaSourceImagesURL). */
export const MAX_IMAGES = 5;
/** Cover of a video pin: a frame one second in (the first frame is often black); past the end, the last frame. */
const COVER_FRAME_SECONDS = 1;
/** `image_base64` accepts these content types only (the OpenAPI `ContentType` enum). */
const BASE64_TYPES = ['image/jpeg', 'image/png'];
/** How many pages of the board the lookup reads, and how many pins per page (the API allows up to 250). */
const LOOKUP_PAGES = 3;
const LOOKUP_PAGE_SIZE = 100;
/** Tolerated skew between our clock and Pinterest's `created_at` when matching an earlier attempt's pin. */
const CLOCK_SLACK_MS = 10 * 60_000;
/** How long after an unanswered POST a board listing may still not show the pin (docs are silent on lag). */
export const LOOKUP_SETTLE_MS = 30_000;

const enc = encodeURIComponent;
const { limits } = PLATFORMS.pinterest;
/** Cuts to `max` code points (the core already refuses longer texts; this keeps Pinterest from refusing). */
const clip = (text: string, max: number) => [...text].slice(0, max).join('');

export interface PinTexts {
  title: string | null;
  description: string | null;
}

/** Title (≤ 100) from the content's title, description (≤ 800) from its text; empty ones are left out. */
export function pinTexts(req: PublishRequest): PinTexts {
  const title = req.title?.trim() ? clip(req.title.trim(), limits.titleMaxChars ?? 100) : null;
  const description = req.text?.trim() ? clip(req.text, limits.textMaxChars) : null;
  return { title, description };
}

const publicAddress = (m: { url: string; publicUrl?: string | null }): string | null => {
  const address = m.publicUrl ?? m.url;
  return /^https?:\/\//.test(address) ? address : null;
};

/** Refuses photos Pinterest could not be given: no public address and a type `image_base64` does not take. */
export function checkPhotos(req: PublishRequest): NetworkFailure | null {
  const items = req.media.slice(0, MAX_IMAGES);
  if (items.length === 0) return failure('upstream_unknown', false, 'A Pinterest pin needs an image or a video.');
  const unsendable = items.find((m) => publicAddress(m) === null && !BASE64_TYPES.includes(m.contentType ?? ''));
  return unsendable ? failure('media_unsupported_format', false, 'Pinterest takes uploaded photos as JPEG or PNG only.') : null;
}

/**
 * The pin's `media_source`. Photos go by address (Pinterest downloads them: an upload's signed public address,
 * else the integrator's); only when some photo has no public address are the bytes sent as base64 (photos are
 * at most 20 MB, so one is held in memory at a time). Several photos make a carousel of up to 5.
 */
export async function mediaSource(ctx: Ctx, kind: 'photo' | 'video', containerId: string): Promise<{ ok: true; source: Record<string, unknown> } | NetworkFailure> {
  if (kind === 'video') return { ok: true, source: { source_type: 'video_id', media_id: containerId, cover_image_key_frame_time: COVER_FRAME_SECONDS } };
  const items = ctx.req.media.slice(0, MAX_IMAGES);
  const addresses = items.map(publicAddress);
  if (addresses.every((a): a is string => a !== null)) {
    return addresses.length === 1
      ? { ok: true, source: { source_type: 'image_url', url: addresses[0] } }
      : { ok: true, source: { source_type: 'multiple_image_urls', items: addresses.map((url) => ({ url })) } };
  }
  const encoded: { content_type: string; data: string }[] = [];
  for (const item of items) {
    const file = await openFile(ctx.deps, item.url);
    if (!file.ok) return file;
    try {
      const max = limits.mediaMaxBytes.photo;
      if (max !== null && file.source.size > max) return failure('media_too_large');
      encoded.push({ content_type: item.contentType ?? 'image/jpeg', data: (await file.source.read(0, file.source.size)).toString('base64') });
    } finally {
      await file.source.close();
    }
  }
  return encoded.length === 1
    ? { ok: true, source: { source_type: 'image_base64', ...encoded[0] } }
    : { ok: true, source: { source_type: 'multiple_image_base64', items: encoded } };
}

/**
 * A lookup refused for good cannot tell whether the lost attempt pinned. Failing with the refusal's own code would
 * invite a reconnect and a retry, and a retry starts the job afresh, without the attempt's record: a second pin.
 */
const LOOKUP_INCONCLUSIVE = failure(
  'upstream_unknown',
  false,
  'An interrupted attempt may have pinned on Pinterest and it could not be checked, so nothing was pinned again. Check the board before republishing.',
);

export type Lookup = { state: 'found'; pinId: string } | { state: 'absent' } | { state: 'too_soon'; retryAfterMs: number } | { state: 'failed'; failure: NetworkFailure };

const same = (a: unknown, b: string | null) => (str(a) ?? '').trim() === (b ?? '').trim();

/**
 * After a POST /v5/pins whose outcome is unknown: is the pin on the board? Pinterest has no idempotency key, so
 * GET /v5/boards/{board_id}/pins is read (a few pages) for a pin with the same title and description, of the
 * same kind, created after the attempt (with clock slack).
 */
export async function findEarlierPin(ctx: Ctx, texts: PinTexts, video: boolean, attemptedAt: number): Promise<Lookup> {
  let bookmark: string | null = null;
  for (let page = 0; page < LOOKUP_PAGES; page++) {
    const query = new URLSearchParams({ page_size: String(LOOKUP_PAGE_SIZE), ...(bookmark ? { bookmark } : {}) });
    const res = await v5(ctx, 'GET', `/boards/${enc(ctx.boardId)}/pins?${query.toString()}`);
    if (!res.ok) return { state: 'failed', failure: res.failure.retryable ? res.failure : LOOKUP_INCONCLUSIVE };
    const body = bodyOf(res);
    const match = list(body.items)
      .map(obj)
      .find((p) => {
        const created = Date.parse(str(p.created_at) ?? '');
        const mediaType = str(obj(p.media).media_type);
        return (
          str(p.id) !== null &&
          same(p.title, texts.title) &&
          same(p.description, texts.description) &&
          (mediaType === null || (mediaType === 'video') === video) &&
          !(Number.isFinite(created) && created < attemptedAt - CLOCK_SLACK_MS)
        );
      });
    const pinId = match ? str(match.id) : null;
    if (pinId) return { state: 'found', pinId };
    bookmark = str(body.bookmark);
    if (!bookmark) break;
  }
  const waited = ctx.deps.now() - attemptedAt;
  return waited < LOOKUP_SETTLE_MS ? { state: 'too_soon', retryAfterMs: Math.max(5_000, LOOKUP_SETTLE_MS - waited) } : { state: 'absent' };
}
