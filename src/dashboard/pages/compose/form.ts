import type { Brand } from '../../../core/brands/brands.schema.js';
import { tiktokOptionsOf } from './tiktok.js';
import type { Connection } from '../../../core/connections/connections.schema.js';
import { MEDIA_ITEMS_MAX } from '../../../core/contents/media-count.js';
import type { SuggestedTime } from '../../../core/scheduling/queue.service.js';
import { IDEMPOTENCY_KEY_RULE, idempotencyKeySchema } from '../../../core/idempotency/idempotency.schema.js';
import { type FieldErrors, optional } from '../../forms.js';
import { PLATFORM_SLUGS, PLATFORMS, type PlatformSlug } from '../../../vocabulary/platforms.js';
import type { MultipartLimits } from '../../multipart.js';
import { type PostedForm } from '../../page-router.js';
import { localPublishAt, whenOf, whenPrecheck, type WhenValues } from '../../when-field.js';

export const COMPOSE = '/dashboard/compose';
export const MEDIA_URL_INPUTS = 3;
export const GB = 1024 * 1024 * 1024;

export const FORM_LIMITS: MultipartLimits = {
  // 25 thread posts, 3 addresses, the networks, connection choices and the rest, with room to spare.
  fields: 150,
  // The longest text the core takes is 100,000 characters, up to 4 bytes each in UTF-8.
  fieldSize: 512 * 1024,
  // One more than a content takes, so the file over the bound reaches the form's own refusal (a message at the
  // field) instead of being dropped unseen; any further one is dropped and the form said to be too large.
  files: MEDIA_ITEMS_MAX + 1,
  // The largest video a network other than YouTube takes; bigger files belong at a public address.
  // The media_storage meter usually stops an upload much earlier.
  fileSize: 5 * GB,
};

/** What the person typed, kept across a failed submit or a preview. */
export interface ComposeValues {
  brandId: string;
  platforms: string[];
  /** Chosen values of every connection select, including empty ones. */
  connections: string[];
  contentType: string;
  title: string;
  text: string;
  threadSplit: boolean;
  threadNumbering: boolean;
  /** The posts typed, empty ones left out (their indexes are those of `thread[i]` errors). */
  thread: string[];
  /** The three address inputs, as typed. */
  mediaUrls: string[];
  /** Uploads already stored (from this submit or an earlier one), sent again as `{media_id}`. */
  mediaIds: string[];
  /** Per-network replacements of the text and title (the API's `overrides`), as typed; empty ones are not sent. */
  overrides: Partial<Record<PlatformSlug, { text: string; title: string }>>;
  /** The creator's TikTok choices as picked ('' for not chosen; 'true'/'false' for the interactions). */
  tiktok: { privacy: string; comment: string; duet: string; stitch: string };
  /** The payment mode (the API's `modo`) as picked; '' for the workspace default. */
  mode: string;
  /** Publish now, schedule, queue or draft, with the date and time typed. */
  when: WhenValues;
}

export interface Choices {
  brands: Brand[];
  /** Each brand's time zone (its queue's, else UTC): a scheduled time is read in it. */
  zones: Record<string, string>;
  /** Connections that can publish (the core treats every non-inactive connection as a candidate). */
  usable: Connection[];
  /** Each brand's suggested date and time for a scheduled post (its next free queue slot, else tomorrow 09:00). */
  suggested: Record<string, SuggestedTime>;
}

/** One media item of the request, with the id of the control it came from (where its `media[i]` error goes). */
export interface MediaItem {
  item: { url: string } | { media_id: string };
  control: string;
}

/** Browsers send textarea line breaks as CRLF; the live counter counts one character per break, so must we. */
const lines = (s: string) => s.replace(/\r\n?/g, '\n');

export function emptyValues(choices: Choices): ComposeValues {
  const brandId = choices.brands.length === 1 ? choices.brands[0]!.id : '';
  // With no brand chosen yet, the first brand's suggestion; the script follows the brand select.
  const suggested = choices.suggested[brandId || (choices.brands[0]?.id ?? '')];
  return {
    brandId,
    platforms: [],
    connections: [],
    contentType: 'text',
    title: '',
    text: '',
    threadSplit: false,
    threadNumbering: false,
    thread: [],
    mediaUrls: [],
    mediaIds: [],
    overrides: {},
    tiktok: { privacy: '', comment: '', duet: '', stitch: '' },
    mode: '',
    when: { when: 'now', date: suggested?.date ?? '', time: suggested?.time ?? '' },
  };
}

export function valuesOf(form: PostedForm): ComposeValues {
  return {
    brandId: form.get('brand_id'),
    platforms: form.all('target_platforms'),
    connections: form.all('connection'),
    contentType: form.get('content_type'),
    title: form.get('title'),
    text: lines(form.get('text')),
    threadSplit: form.get('thread_split') === 'auto',
    threadNumbering: form.get('thread_numbering') === 'true',
    thread: form
      .all('thread')
      .map((p) => lines(p).trim())
      .filter((p) => p !== ''),
    mediaUrls: form.all('media_url').slice(0, MEDIA_URL_INPUTS),
    mediaIds: form.all('media_id').filter((id) => id !== ''),
    overrides: Object.fromEntries(
      PLATFORM_SLUGS.flatMap((slug) => {
        const text = lines(form.get(`override_text_${slug}`));
        const title = form.get(`override_title_${slug}`);
        return text === '' && title === '' ? [] : [[slug, { text, title }]];
      }),
    ),
    tiktok: { privacy: form.get('tiktok_privacy_level'), comment: form.get('tiktok_allow_comment'), duet: form.get('tiktok_allow_duet'), stitch: form.get('tiktok_allow_stitch') },
    mode: form.get('modo'),
    when: whenOf(form, 'now'),
  };
}

/** The media items in the order they are sent: addresses first, then uploads. */
export function mediaItemsOf(values: ComposeValues): MediaItem[] {
  const urls = values.mediaUrls.flatMap((raw, i) => {
    const url = raw.trim();
    return url === '' ? [] : [{ item: { url }, control: `media-url-${i + 1}` }];
  });
  return [...urls, ...values.mediaIds.map((id, i) => ({ item: { media_id: id }, control: `media-kept-${i + 1}` }))];
}

/** The connection choices that apply: of the chosen brand, on a chosen network. */
export function chosenConnections(values: ComposeValues, choices: Choices): string[] {
  return values.connections.filter((id) => {
    const conn = choices.usable.find((c) => c.id === id);
    return conn !== undefined && conn.brand_id === values.brandId && values.platforms.includes(conn.platform_slug);
  });
}

/** Content types that carry media, and those a network may title (YouTube's videos, TikTok's posts, Pinterest's pins). */
export const MEDIA_TYPES: readonly string[] = ['photo', 'video', 'reel'];
export const TITLE_TYPES: readonly string[] = ['photo', 'video', 'reel'];
/** The networks that take a title, with its limit. */
export const TITLED_NETWORKS = PLATFORM_SLUGS.filter((slug) => PLATFORMS[slug].limits.titleMaxChars !== null);

/** The overrides to send: only for networks chosen, only what was typed (the API's `overrides`). */
function overridesOf(values: ComposeValues): Record<string, { text?: string; title?: string }> {
  const out: Record<string, { text?: string; title?: string }> = {};
  for (const slug of values.platforms) {
    const typed = values.overrides[slug as PlatformSlug];
    if (!typed) continue;
    const text = optional(typed.text);
    const title = TITLE_TYPES.includes(values.contentType) && PLATFORMS[slug as PlatformSlug]?.limits.titleMaxChars !== null ? optional(typed.title) : undefined;
    if (text !== undefined || title !== undefined) out[slug] = { ...(text !== undefined ? { text } : {}), ...(title !== undefined ? { title } : {}) };
  }
  return out;
}

/**
 * The core's input from the form, unchecked: `createContentInputSchema` and the core judge it. Fields follow the
 * content type, so what a browser without scripts still shows for another type (a title for a text post, media
 * for a thread) is left out rather than refused.
 */
export function inputOf(values: ComposeValues, choices: Choices): Record<string, unknown> {
  const connections = chosenConnections(values, choices);
  const type = values.contentType;
  const media = MEDIA_TYPES.includes(type) ? mediaItemsOf(values).map((m) => m.item) : [];
  const threadPosts = type === 'thread' ? values.thread : [];
  // A thread is its posts; its text is used only when no post was typed (split from the text).
  const text = type === 'thread' && threadPosts.length > 0 ? undefined : optional(values.text);
  const title = TITLE_TYPES.includes(type) ? optional(values.title) : undefined;
  const mode = optional(values.mode);
  const overrides = overridesOf(values);
  const tiktok = values.platforms.includes('tiktok') ? tiktokOptionsOf(values) : undefined;
  return {
    brand_id: values.brandId,
    target_platforms: values.platforms,
    ...(connections.length > 0 ? { target_connections: connections } : {}),
    content_type: type,
    ...(text !== undefined ? { text } : {}),
    ...(title !== undefined ? { title } : {}),
    ...(media.length > 0 ? { media } : {}),
    ...(threadPosts.length > 0 ? { thread: threadPosts } : {}),
    ...(values.threadSplit && (type === 'text' || type === 'thread') ? { thread_split: 'auto' } : {}),
    ...(values.threadNumbering && (type === 'text' || type === 'thread') ? { thread_numbering: true } : {}),
    ...(Object.keys(overrides).length > 0 ? { overrides } : {}),
    ...(tiktok !== undefined ? { network_options: { tiktok } } : {}),
    ...(mode !== undefined ? { modo: mode } : {}),
    ...timingOf(values.when),
  };
}

/** The timing fields of the request: none publishes now. A local time goes without zone: the brand's applies. */
function timingOf(when: WhenValues): Record<string, unknown> {
  switch (when.when) {
    case 'schedule': {
      const at = localPublishAt(when);
      return at === undefined ? {} : { publish_at: at };
    }
    case 'queue':
      return { queue: true };
    case 'draft':
      return { draft: true };
    default:
      return {};
  }
}

/**
 * What only the form can say, before the core judges the request: the Brand select left on “Choose…” (the core
 * would see an empty id and answer that no such brand exists). Every other refusal (no network, a network
 * without a connection, a thread without posts, a photo without media, an unknown brand) is the schema's or the
 * core's, placed next to its control by the path it names.
 */
export function precheck(values: ComposeValues): FieldErrors {
  return { ...(values.brandId === '' ? { brand_id: 'Choose a brand.' } : {}), ...whenPrecheck(values.when) };
}

/** The form's hidden idempotency key: absent, valid, or refused with the rule it breaks. */
export type FormKey = { ok: true; key: string | undefined } | { ok: false; rule: string };

/**
 * Checks the key a form render carries with the schema every door uses (spec 4.3). A malformed key is refused,
 * never dropped: without it a second click would publish twice.
 */
export function formKeyOf(fields: Readonly<Record<string, string[]>>): FormKey {
  const key = fields.idempotency_key?.[0];
  if (key === undefined) return { ok: true, key };
  return idempotencyKeySchema.safeParse(key).success ? { ok: true, key } : { ok: false, rule: IDEMPOTENCY_KEY_RULE };
}
