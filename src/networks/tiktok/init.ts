import type { MediaRef, NetworkFailure, PublishRequest } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { list, str } from '../kit/json.js';
import { type Ctx, openFile, post, save, type Source, unexpected } from './api.js';
import { LEASE_LOST } from './errors.js';
import { chunkPlan } from './upload.js';
import { PLATFORMS, platformFor } from '../../vocabulary/platforms.js';

/**
 * Starting a publication (Content Posting API): the creator's current options (creator_info/query), then one init
 * call — video/init (Direct Post), inbox/video/init (Upload, the creator finishes in the app) or content/init
 * (photos) — whose `publish_id` names the publication from then on.
 */

export interface PostPlan {
  kind: 'video' | 'photo';
  mode: 'direct' | 'inbox';
  /** The app passed TikTok's audit: posts may be public. Unaudited apps post SELF_ONLY. */
  audited: boolean;
  /** Videos with an https address are pulled by TikTok (PULL_FROM_URL, domain verified in the portal). */
  pullVideos: boolean;
  chunkSizeBytes: number;
}

const GB = 1024 * 1024 * 1024;
/** Media Transfer Guide, video restrictions: "Maximum of 4GB". */
const MAX_VIDEO_BYTES = 4 * GB;
/** Photo reference: "An array containing up to 35 photo content URLs". */
const MAX_PHOTOS = 35;
/** UTF-16 code units ("runes" in the reference): video caption 2200; photo title 90, description 4000. */
const VIDEO_CAPTION_MAX = PLATFORMS.tiktok.limits.textMaxChars;
const PHOTO_TITLE_MAX = PLATFORMS.tiktok.limits.titleMaxChars ?? 90;
const PHOTO_DESCRIPTION_MAX = platformFor('tiktok', 'photo').limits.textMaxChars;
/** Widest first; unaudited apps may only post SELF_ONLY. */
const PRIVACY_PREFERENCE = ['PUBLIC_TO_EVERYONE', 'FOLLOWER_OF_CREATOR', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'];

/**
 * An init whose answer was lost and whose media TikTok pulls itself: TikTok may be publishing it, and the API
 * offers no way to find a publication without its publish_id (the Display API's video list needs another scope
 * and shows public videos only). Refusing is the only way never to post twice.
 */
export const INIT_OUTCOME_UNKNOWN = failure(
  'upstream_unknown',
  false,
  'An earlier request to TikTok got no answer and TikTok offers no way to look it up, so the post may already be publishing. It was not sent again: check the TikTok profile before republishing.',
);

/** Cuts to `max` UTF-16 code units without splitting a surrogate pair. */
export function clipUtf16(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

const isHttps = (u: string | null | undefined): u is string => typeof u === 'string' && /^https:\/\//i.test(u);
/** The address TikTok downloads from: an upload's signed public address, else the integrator's own. */
const pullAddress = (m: MediaRef): string | null => (isHttps(m.publicUrl) ? m.publicUrl : isHttps(m.url) ? m.url : null);

interface CreatorView {
  username: string | null;
  privacy: string;
  disableComment: boolean;
  disableDuet: boolean;
  disableStitch: boolean;
}

/**
 * creator_info/query, required before a direct post: it refuses (with HTTP 200) an account over its daily cap or
 * banned, and lists the visibilities the account offers now. The post takes the creator's own choices from the
 * content (TikTok's Direct Post guidelines: no preset default): a level TikTok does not offer this creator, or
 * any but SELF_ONLY from an unaudited app, is refused in words the creator can act on. An interaction the
 * creator turned off in the app stays off. A content stored before the choices were asked for keeps the former
 * rule (the widest level offered, the creator's app settings). `max_video_post_duration_sec` cannot be checked
 * here: the service does not know a video's duration.
 */
async function creatorInfo(ctx: Ctx, plan: PostPlan): Promise<{ ok: true; view: CreatorView } | NetworkFailure> {
  const res = await post(ctx, '/v2/post/publish/creator_info/query/');
  if (!res.ok) return res.failure;
  const options = list(res.data.privacy_level_options).filter((o): o is string => typeof o === 'string');
  const app = { comment: res.data.comment_disabled === true, duet: res.data.duet_disabled === true, stitch: res.data.stitch_disabled === true };
  const username = str(res.data.creator_username);
  const chosen = ctx.req.tiktok ?? null;
  if (chosen) {
    if (!options.includes(chosen.privacy_level)) {
      return failure('upstream_unknown', false, `TikTok does not offer this creator the privacy level ${chosen.privacy_level} now; it offers ${options.join(', ') || 'none'}. Choose one of those.`);
    }
    if (!plan.audited && chosen.privacy_level !== 'SELF_ONLY') {
      return failure('upstream_unknown', false, "This installation's TikTok app has not passed TikTok's audit, so TikTok accepts only private posts (privacy_level SELF_ONLY).");
    }
    const view = {
      username,
      privacy: chosen.privacy_level,
      disableComment: app.comment || !chosen.allow_comment,
      disableDuet: app.duet || chosen.allow_duet !== true,
      disableStitch: app.stitch || chosen.allow_stitch !== true,
    };
    return { ok: true, view };
  }
  const privacy = plan.audited ? PRIVACY_PREFERENCE.find((p) => options.includes(p)) : options.includes('SELF_ONLY') ? 'SELF_ONLY' : undefined;
  if (!privacy) return unexpected(ctx.deps, 'creator_info without a usable privacy level');
  return { ok: true, view: { username, privacy, disableComment: app.comment, disableDuet: app.duet, disableStitch: app.stitch } };
}

type Body = { ok: true; path: string; source: Source; body: Record<string, unknown>; upload: { total: number; chunkSize: number; chunks: number } | null } | NetworkFailure;

async function videoBody(ctx: Ctx, plan: PostPlan, creator: CreatorView | null): Promise<Body> {
  const req = ctx.req;
  const media = req.media[0];
  if (!media) return failure('upstream_unknown', false, 'A TikTok video post needs a video.');
  const address = plan.pullVideos ? pullAddress(media) : null;
  let sourceInfo: Record<string, unknown>;
  let upload: { total: number; chunkSize: number; chunks: number } | null = null;
  if (address) sourceInfo = { source: 'PULL_FROM_URL', video_url: address };
  else {
    // Only the size is needed here; the bytes are read chunk by chunk when they are sent.
    const file = await openFile(ctx.deps, media.url);
    if (!file.ok) return file;
    const total = file.source.size;
    await file.source.close();
    if (total === 0) return failure('media_unsupported_format', false, 'The video file is empty.');
    if (total > MAX_VIDEO_BYTES) return failure('media_too_large', false, 'TikTok takes videos of at most 4 GB.');
    upload = { total, ...chunkPlan(total, plan.chunkSizeBytes) };
    sourceInfo = { source: 'FILE_UPLOAD', video_size: total, chunk_size: upload.chunkSize, total_chunk_count: upload.chunks };
  }
  const source = sourceInfo.source as Source;
  // The Upload (inbox) endpoint takes source_info only: the creator writes the caption in the app.
  if (plan.mode === 'inbox' || !creator) return { ok: true, path: '/v2/post/publish/inbox/video/init/', source, body: { source_info: sourceInfo }, upload };
  const caption = clipUtf16(req.text || req.title || '', VIDEO_CAPTION_MAX);
  const postInfo = {
    ...(caption ? { title: caption } : {}),
    privacy_level: creator.privacy,
    disable_duet: creator.disableDuet,
    disable_comment: creator.disableComment,
    disable_stitch: creator.disableStitch,
    // Marked required in the reference: this service publishes no paid partnership or self-promotion label.
    brand_content_toggle: false,
    brand_organic_toggle: false,
  };
  return { ok: true, path: '/v2/post/publish/video/init/', source, body: { post_info: postInfo, source_info: sourceInfo }, upload };
}

function photoBody(req: PublishRequest, plan: PostPlan, creator: CreatorView | null): Body {
  // content/init takes PULL_FROM_URL only: TikTok downloads each photo from a verified domain.
  const images = req.media.slice(0, MAX_PHOTOS).map(pullAddress);
  if (images.length === 0 || images.some((u) => u === null)) {
    return failure('upstream_unknown', false, 'TikTok downloads photos itself, and a photo of this post has no public https address.');
  }
  const title = clipUtf16(req.title ?? '', PHOTO_TITLE_MAX);
  const description = clipUtf16(req.text ?? '', PHOTO_DESCRIPTION_MAX);
  const text = { ...(title ? { title } : {}), ...(description ? { description } : {}) };
  const direct = plan.mode === 'direct' && creator !== null;
  const postInfo = direct
    ? { ...text, privacy_level: creator.privacy, disable_comment: creator.disableComment, brand_content_toggle: false, brand_organic_toggle: false }
    : text;
  return {
    ok: true,
    path: '/v2/post/publish/content/init/',
    source: 'PULL_FROM_URL',
    body: { post_info: postInfo, source_info: { source: 'PULL_FROM_URL', photo_cover_index: 0, photo_images: images }, post_mode: direct ? 'DIRECT_POST' : 'MEDIA_UPLOAD', media_type: 'PHOTO' },
    upload: null,
  };
}

/**
 * The job's publication on TikTok: the saved one, or a new one. The init marker is saved before the call and the
 * publish_id right after, so an answer that never comes is known on the next run. Then a FILE_UPLOAD init is
 * simply made again — the lost one's upload URL was never learnt, so its upload can never complete and it can
 * never post — while a PULL_FROM_URL init (TikTok starts downloading and publishing on its own) is not repeated.
 *
 * Residual risk, stated plainly: for PULL_FROM_URL (every photo post, and videos when `pullVideos`), an init whose
 * answer is lost ends the job with INIT_OUTCOME_UNKNOWN although TikTok may not have received it at all; and if
 * the publish_id cannot be saved (the lease was lost just then), the run taking over sees only the marker and
 * stops the same way while the post may go live. Nothing is ever posted twice; a post may be reported failed.
 * The docs give no lookup by content: /v2/video/list/ needs the video.list scope and lists public videos only,
 * and unaudited apps' posts are private.
 */
export async function ensureStarted(ctx: Ctx, plan: PostPlan): Promise<{ ok: true; publishId: string } | NetworkFailure> {
  if (ctx.state.publishId) return { ok: true, publishId: ctx.state.publishId };
  if (ctx.state.initStartedAt !== null) {
    if (ctx.state.source !== 'FILE_UPLOAD') return INIT_OUTCOME_UNKNOWN;
    ctx.deps.log('tiktok: an earlier init got no answer; its upload can never complete, so a new one is made', {});
  }
  let creator: CreatorView | null = null;
  if (plan.mode === 'direct') {
    const info = await creatorInfo(ctx, plan);
    if (!info.ok) return info;
    creator = info.view;
  }
  const body = plan.kind === 'video' ? await videoBody(ctx, plan, creator) : photoBody(ctx.req, plan, creator);
  if (!body.ok) return body;

  const marker = { source: body.source, initStartedAt: ctx.deps.now(), username: creator?.username ?? ctx.state.username, privacy: creator?.privacy ?? null };
  if (!(await save(ctx, marker))) return LEASE_LOST;
  const res = await post(ctx, body.path, body.body);
  if (!res.ok) {
    // A refusal created nothing: the next attempt may init without a doubt. Otherwise the marker stays.
    if (res.definite && !(await save(ctx, { initStartedAt: null }))) return LEASE_LOST;
    return res.failure;
  }
  const publishId = str(res.data.publish_id);
  const uploadUrl = str(res.data.upload_url);
  if (!publishId || (body.upload && !uploadUrl)) {
    // Accepted but unnamed: as good as no answer (the marker stays).
    ctx.deps.log('tiktok: unexpected answer', { call: `${body.path} without publish_id or upload_url` });
    return failure('upstream_5xx', true, 'TikTok accepted the post without naming it.');
  }
  const upload = body.upload ? { ...body.upload, done: 0, sending: null } : null;
  // Even if this save fails (lease lost), the marker tells the next run an init may have happened.
  if (!(await save(ctx, { publishId, uploadUrl, upload }))) return LEASE_LOST;
  return { ok: true, publishId };
}
