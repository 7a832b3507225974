import type { Confirmation, NetworkAdapter, NetworkFailure, PublishRequest, Published, Submitted } from '../adapter.js';
import { mediaKindOf, PLATFORMS } from '../../vocabulary/platforms.js';
import { failure } from '../kit/failure.js';
import { str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { bodyOf, type Ctx, LEASE_LOST, progressOf, save, v5 } from './api.js';
import { checkPhotos, findEarlierPin, mediaSource, pinTexts } from './pins.js';
import { uploadVideo, videoReady } from './video.js';

/** Container id of a photo pin: Pinterest downloads photos at creation, so nothing is prepared beforehand. */
const IMAGES = 'images';
const enc = encodeURIComponent;

export const pinUrl = (id: string): string => `${PLATFORMS.pinterest.postUrlBase}${id}/`;

/**
 * Pinterest (API v5). A connection publishes to one board (its account id). `submit` uploads a video
 * (POST /v5/media, then the form upload) and returns its media id — nothing public yet; photos need nothing
 * beforehand. `publish` waits for the video to be `succeeded` and creates the pin (POST /v5/pins), saving
 * "creating since T" first: Pinterest has no idempotency key, so a run whose answer was lost looks the board's
 * recent pins up for ours before creating again. `confirm` reads the pin.
 *
 * Residual risk of a duplicate, accepted and documented: the lookup reads the board's first 300 pins and matches
 * on title, description and kind. A pin whose answer was lost, that Pinterest takes more than LOOKUP_SETTLE_MS
 * to list (or that the user moved to another board or deleted meanwhile), is created a second time.
 */
export function createPinterestAdapter(settings: NetworkSettings, deps: NetworkDeps): NetworkAdapter {
  function context(req: PublishRequest): Ctx | NetworkFailure {
    if (!req.credentials) return failure('upstream_unknown', false, 'This Pinterest connection has no credentials. Reconnect it.');
    const { accessToken, accountId } = req.credentials;
    // Board ids are digits (OpenAPI `^\d+$`); anything else is a connection made before boards were chosen.
    if (!/^\d+$/.test(accountId)) return failure('permission_revoked', false, 'This Pinterest connection has no board to publish to. Reconnect Pinterest.');
    return { deps, base: settings.apiBaseUrl, token: accessToken, boardId: accountId, req, state: progressOf(req.progress) };
  }
  const kindOf = (req: PublishRequest) => mediaKindOf(req.contentType);

  return {
    async submit(req): Promise<Submitted> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      const kind = kindOf(req);
      if (kind === 'photo') {
        const refused = checkPhotos(req);
        return refused ?? { ok: true, containerId: IMAGES };
      }
      const video = req.media[0];
      if (kind === null || !video) return failure('upstream_unknown', false, 'A Pinterest pin needs an image or a video.');
      const up = await uploadVideo(ctx, video);
      return up.ok ? { ok: true, containerId: up.mediaId } : up;
    },

    async publish(req, containerId): Promise<Published> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      if (ctx.state.pinId) return { ok: true, postId: ctx.state.pinId, url: pinUrl(ctx.state.pinId) };
      const video = containerId !== IMAGES;
      if (video) {
        const notReady = await videoReady(ctx, containerId);
        if (notReady) return notReady;
      }
      const texts = pinTexts(req);

      const earlier = ctx.state.creating;
      if (earlier) {
        const seen = await findEarlierPin(ctx, texts, video, earlier.attemptedAt);
        if (seen.state === 'failed') return seen.failure;
        if (seen.state === 'too_soon') return { ok: 'pending', retryAfterMs: seen.retryAfterMs };
        if (seen.state === 'found') {
          await save(ctx, { pinId: seen.pinId, creating: null });
          return { ok: true, postId: seen.pinId, url: pinUrl(seen.pinId) };
        }
      }

      const media = await mediaSource(ctx, video ? 'video' : 'photo', containerId);
      if (!media.ok) return media;
      const body = {
        board_id: ctx.boardId,
        ...(texts.title !== null ? { title: texts.title } : {}),
        ...(texts.description !== null ? { description: texts.description } : {}),
        media_source: media.source,
      };
      // Saved before the POST: if its answer is lost, the next run looks the pin up instead of creating again.
      if (!(await save(ctx, { creating: { attemptedAt: deps.now() } }))) return LEASE_LOST;
      const res = await v5(ctx, 'POST', '/pins', body);
      if (res.ok) {
        const id = str(bodyOf(res).id);
        if (!id) {
          // Created but unnamed: keep the marker and retry, so the next run finds the pin by lookup.
          deps.log('pinterest: unexpected answer', { call: 'POST /v5/pins without id' });
          return failure('upstream_5xx', true, 'Pinterest accepted the pin without naming it; it is looked up on the next attempt.');
        }
        // Even if this save fails (lease lost), the marker lets the next run find the pin.
        await save(ctx, { pinId: id, creating: null });
        return { ok: true, postId: id, url: pinUrl(id) };
      }
      // A 4xx (429 included) is a refusal: nothing was created, so a later run may create without looking up.
      // A 5xx, a 408 or no answer leaves the outcome unknown and the marker in place.
      if (res.status !== null && res.status < 500 && res.status !== 408) await save(ctx, { creating: null });
      return res.failure;
    },

    async confirm(req, postId): Promise<Confirmation> {
      const ctx = context(req);
      if ('ok' in ctx) return { state: 'unavailable' };
      const res = await v5(ctx, 'GET', `/pins/${enc(postId)}`);
      if (res.ok) return str(bodyOf(res).id) ? { state: 'found', url: pinUrl(postId) } : { state: 'unavailable' };
      // 404 code 50 "Pin not found." (the pin was deleted, or never made).
      return res.status === 404 ? { state: 'not_found' } : { state: 'unavailable' };
    },
  };
}
