import type { Confirmation, NetworkAdapter, NetworkFailure, PublishRequest, Published, Submitted } from '../adapter.js';
import { mediaKindOf, PLATFORMS } from '../../vocabulary/platforms.js';
import { failure } from '../kit/failure.js';
import { list, obj, parseJson, str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { type Ctx, LEASE_LOST, progressOf, type Reply, rest, save } from './rest.js';
import { mediaReady, uploadImage, uploadVideo } from './uploads.js';

/** Container id of a post without media (LinkedIn has no container for text; publish posts directly). */
const TEXT_ONLY = 'text';
/** `content.multiImage` takes 2 to 20 images. */
const MAX_IMAGES = 20;
/** How long after an unanswered POST the author finder may still not list the post (it reads an index). */
const LOOKUP_SETTLE_MS = 60_000;
/** Tolerated skew between our clock and LinkedIn's `createdAt` when matching an earlier attempt's post. */
const CLOCK_SLACK_MS = 10 * 60_000;

const LOOKUP_REFUSED = failure(
  'upstream_unknown',
  false,
  'LinkedIn did not let us check whether an interrupted attempt was posted, so it was not posted again. Check the profile before republishing.',
);

type Lookup = { state: 'found'; urn: string } | { state: 'absent' } | { state: 'too_soon'; retryAfterMs: number } | { state: 'failed'; failure: NetworkFailure };
const enc = encodeURIComponent;

/**
 * LinkedIn's "little text" format treats \ | { } @ [ ] ( ) < > # * _ ~ as markup; unescaped, the commentary is
 * cut or mangled. A '#' that starts a word is left as is, so hashtags stay hashtags as in LinkedIn's composer.
 */
function escapeLittleText(text: string): string {
  return text.replace(/[\\|{}@[\]()<>#*_~]/g, (c, at: number) => {
    const hashtag = c === '#' && (at === 0 || /\s/.test(text[at - 1] ?? '')) && /[\p{L}\p{N}]/u.test(text[at + 1] ?? '');
    return hashtag ? c : `\\${c}`;
  });
}
const unescapeLittleText = (text: string): string => text.replace(/\\(.)/gsu, '$1');

function sameMedia(content: unknown, urns: string[]): boolean {
  const c = obj(content);
  if (urns.length === 0) return c.media === undefined && c.multiImage === undefined;
  const ids = urns.length === 1 ? [str(obj(c.media).id)] : list(obj(c.multiImage).images).map((m) => str(obj(m).id));
  return ids.join(',') === urns.join(',');
}

/**
 * After a POST whose answer was lost: is the post there? The author finder lists the latest posts; ours has the
 * same commentary and media and was created after the attempt (with some clock slack).
 */
async function findEarlierPost(ctx: Ctx, commentary: string, urns: string[], attemptedAt: number): Promise<Lookup> {
  const path = `/rest/posts?author=${enc(ctx.author)}&q=author&count=10&sortBy=LAST_MODIFIED`;
  const res = await rest(ctx, 'GET', path, undefined, { 'X-RestLi-Method': 'FINDER' });
  if (!res.ok) {
    // Reading posts needs r_member_social / r_organization_social. Without it we cannot know whether the
    // earlier attempt posted: stop rather than risk a second post (and do not expire the connection).
    return { state: 'failed', failure: res.failure.code === 'permission_revoked' ? LOOKUP_REFUSED : res.failure };
  }
  const wanted = unescapeLittleText(commentary);
  const match = list(obj(parseJson(res.text)).elements)
    .map(obj)
    .find((p) => str(p.id) && unescapeLittleText(str(p.commentary) ?? '') === wanted && sameMedia(p.content, urns) && !(typeof p.createdAt === 'number' && p.createdAt < attemptedAt - CLOCK_SLACK_MS));
  const urn = match ? str(match.id) : null;
  if (urn) return { state: 'found', urn };
  const waited = ctx.deps.now() - attemptedAt;
  return waited < LOOKUP_SETTLE_MS ? { state: 'too_soon', retryAfterMs: Math.max(5_000, LOOKUP_SETTLE_MS - waited) } : { state: 'absent' };
}

const postUrl = (urn: string): string => `${PLATFORMS.linkedin.postUrlBase}${urn}/`;

/** LinkedIn refuses identical content with 422 "Content is a duplicate of urn:li:share:…": that post is ours. */
function duplicateOf(answer: Reply): string | null {
  if (answer.ok || answer.status !== 422 || answer.info === null) return null;
  return /duplicate of (urn:li:(?:share|ugcPost):[\w-]+)/i.exec(answer.info.text)?.[1] ?? null;
}

/**
 * LinkedIn (Posts API). `submit` uploads the media (images, or a video in parts) and returns their URNs as the
 * container id — nothing public yet; `publish` waits for the media to be AVAILABLE and creates the post, looking
 * up an earlier attempt whose answer was lost before posting again; `confirm` reads the post.
 */
export function createLinkedinAdapter(settings: NetworkSettings, deps: NetworkDeps): NetworkAdapter {
  function context(req: PublishRequest): Ctx | NetworkFailure {
    if (!req.credentials) return failure('upstream_unknown', false, 'This LinkedIn connection has no credentials. Reconnect it.');
    if (!settings.apiVersion) {
      deps.log('linkedin: LinkedIn-Version is not configured', {});
      return failure('upstream_unknown', false, 'LinkedIn is not fully configured on this service (API version).');
    }
    const { accessToken, accountId } = req.credentials;
    return { deps, base: settings.apiBaseUrl, version: settings.apiVersion, token: accessToken, author: accountId, req, state: progressOf(req.progress) };
  }

  return {
    async submit(req): Promise<Submitted> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      const kind = mediaKindOf(req.contentType);
      if (kind === null || req.media.length === 0) return { ok: true, containerId: TEXT_ONLY };
      // A post carries one video, or up to 20 images.
      const items = kind === 'video' ? req.media.slice(0, 1) : req.media.slice(0, MAX_IMAGES);
      const urns: string[] = [];
      for (const [i, item] of items.entries()) {
        const up = kind === 'video' ? await uploadVideo(ctx, i, item.url) : await uploadImage(ctx, i, item.url);
        if (!up.ok) return up;
        urns.push(up.urn);
      }
      return { ok: true, containerId: urns.join(',') };
    },

    async publish(req, containerId): Promise<Published> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      if (ctx.state.postUrn) return { ok: true, postId: ctx.state.postUrn, url: postUrl(ctx.state.postUrn) };
      const urns = containerId === TEXT_ONLY ? [] : containerId.split(',');
      const notReady = await mediaReady(ctx, urns);
      if (notReady) return notReady;

      const commentary = escapeLittleText(req.text ?? '');
      const earlier = ctx.state.post;
      if (earlier) {
        const seen = await findEarlierPost(ctx, commentary, urns, earlier.attemptedAt);
        if (seen.state === 'failed') return seen.failure;
        if (seen.state === 'too_soon') return { ok: 'pending', retryAfterMs: seen.retryAfterMs };
        if (seen.state === 'found') {
          await save(ctx, { postUrn: seen.urn });
          return { ok: true, postId: seen.urn, url: postUrl(seen.urn) };
        }
      }

      const content = urns.length === 0 ? {} : urns.length === 1 ? { content: { media: { id: urns[0] } } } : { content: { multiImage: { images: urns.map((id) => ({ id })) } } };
      const body = {
        author: ctx.author,
        commentary,
        visibility: 'PUBLIC',
        distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
        lifecycleState: 'PUBLISHED',
        ...content,
      };
      // Saved before the POST: if its answer is lost, the next run looks the post up instead of posting again.
      if (!(await save(ctx, { post: { attemptedAt: deps.now() } }))) return LEASE_LOST;
      const res = await rest(ctx, 'POST', '/rest/posts', body);
      if (res.ok) {
        const urn = res.headers.get('x-restli-id');
        if (!urn) {
          // Created but unnamed: keep the marker and retry, so the next run finds the post by lookup.
          deps.log('linkedin: unexpected answer', { call: 'POST /rest/posts without x-restli-id' });
          return failure('upstream_5xx', true, 'LinkedIn accepted the post without naming it; it is looked up on the next attempt.');
        }
        // Even if this save fails (lease lost), the attempt marker lets the next run find the post.
        await save(ctx, { postUrn: urn });
        return { ok: true, postId: urn, url: postUrl(urn) };
      }
      const duplicate = earlier ? duplicateOf(res) : null;
      if (duplicate) {
        await save(ctx, { postUrn: duplicate });
        return { ok: true, postId: duplicate, url: postUrl(duplicate) };
      }
      // A 4xx is a refusal: nothing was created, so a later run may post without looking up first. A 5xx or no
      // answer leaves the outcome unknown and the marker in place.
      if (res.status !== null && res.status < 500 && res.status !== 408) await save(ctx, { post: null });
      return res.failure;
    },

    async confirm(req, postId): Promise<Confirmation> {
      const ctx = context(req);
      if ('ok' in ctx) return { state: 'unavailable' };
      const res = await rest(ctx, 'GET', `/rest/posts/${enc(postId)}`);
      if (!res.ok) return res.status === 404 || res.status === 410 ? { state: 'not_found' } : { state: 'unavailable' };
      const lifecycle = str(obj(parseJson(res.text)).lifecycleState);
      if (lifecycle === 'PUBLISH_FAILED') return { state: 'not_found' };
      if (lifecycle === 'PUBLISH_REQUESTED' || lifecycle === 'DRAFT') return { state: 'pending' };
      return { state: 'found', url: postUrl(postId) };
    },
  };
}

