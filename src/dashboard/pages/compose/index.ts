import { randomUUID } from 'node:crypto';
import type { Brand } from '../../../core/brands/brands.schema.js';
import type { Connection } from '../../../core/connections/connections.schema.js';
import { type CreateContentInput, createContentInputSchema, type Preview } from '../../../core/contents/contents.schema.js';
import { ServiceError } from '../../../core/errors.js';
import type { UploadedMedia } from '../../../core/media/media.schema.js';
import { MODOS, type Modo } from '../../../core/wallet/wallet.schema.js';
import { CONTENT_TYPES, type ContentType, mediaKindOf, PLATFORM_SLUGS, PLATFORMS, type PlatformSlug } from '../../../vocabulary/platforms.js';
import { explainServiceError, meterLabel, platformName } from '../../explain.js';
import { check, type FieldErrors, fieldErrorsOf, optional } from '../../forms.js';
import { html, type SafeHtml } from '../../html.js';
import { bytes, csrfField, errorBanner, field, number, table } from '../../layout.js';
import { FileTooLarge, type IncomingFile, type MultipartLimits, readForm } from '../../multipart.js';
import { CsrfRefused, FormData as FormFields, type PageContext, type PageResult, type PageRouter } from '../../page-router.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../../../core/idempotency/idempotency.service.js';

const COMPOSE = '/dashboard/compose';
const THREAD_MAX_POSTS = PLATFORMS.threads.limits.threadMaxPosts ?? 25;
const THREAD_POST_CHARS = PLATFORMS.threads.limits.textMaxChars;
const MEDIA_URL_INPUTS = 3;
const GB = 1024 * 1024 * 1024;

const FORM_LIMITS: MultipartLimits = {
  // 25 thread posts, 3 addresses, the networks, connection choices and the rest, with room to spare.
  fields: 150,
  // The longest text the core takes is 100,000 characters, up to 4 bytes each in UTF-8.
  fieldSize: 512 * 1024,
  files: 1,
  // The largest video a network other than YouTube takes; bigger files belong at a public address.
  // The media_storage meter usually stops an upload much earlier.
  fileSize: 5 * GB,
};

const CONTENT_TYPE_LABELS: Record<ContentType, string> = {
  text: 'Text only',
  photo: 'Photo',
  video: 'Video',
  reel: 'Reel (short video)',
  thread: 'Thread (a chain of posts, Threads only)',
};

const MODO_LABELS: Record<Modo, string> = {
  plano: 'The plan only (refused when its allowance is used up)',
  creditos: 'Credits for every publication',
  automatico: 'The plan while it lasts, then credits',
};

/** Refusals about the credit balance: their banner links to the wallet. */
const SALDO_CODES = new Set(['saldo_insuficiente', 'saldo_fragmentado', 'lote_vencido']);

/** Field paths the form shows next to a control; any other error goes to the banner. */
const FIELD_PREFIXES = ['brand_id', 'target_platforms', 'target_connections', 'content_type', 'text', 'title', 'thread', 'media', 'media_file', 'modo'];

/** What the person typed, kept across a failed submit or a preview. */
interface ComposeValues {
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
  modo: string;
}

interface Outcome {
  errors?: FieldErrors;
  banner?: { message: string; wallet: boolean };
  /** The connections offered by a 422 connections_required. */
  offered?: { id: string; name: string; platform_slug: string }[];
  preview?: Preview;
  status?: number;
}

interface Choices {
  brands: Brand[];
  /** Connections that can publish (the core treats every non-inactive connection as a candidate). */
  usable: Connection[];
}

const chars = (s: string) => Array.from(s).length;

/** Browsers send textarea line breaks as CRLF; the live counter counts one character per break, so must we. */
const lines = (s: string) => s.replace(/\r\n?/g, '\n');

function emptyValues(choices: Choices): ComposeValues {
  return {
    brandId: choices.brands.length === 1 ? choices.brands[0]!.id : '',
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
    modo: '',
  };
}

function valuesOf(form: FormFields): ComposeValues {
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
    modo: form.get('modo'),
  };
}

/** The media items in the order they are sent, each with the id of the control it came from. */
function mediaItemsOf(values: ComposeValues): { item: { url: string } | { media_id: string }; control: string }[] {
  const urls = values.mediaUrls.flatMap((raw, i) => {
    const url = raw.trim();
    return url === '' ? [] : [{ item: { url }, control: `media-url-${i + 1}` }];
  });
  return [...urls, ...values.mediaIds.map((id, i) => ({ item: { media_id: id }, control: `media-kept-${i + 1}` }))];
}

/** The connection choices that apply: of the chosen brand, on a chosen network. */
function chosenConnections(values: ComposeValues, choices: Choices): string[] {
  return values.connections.filter((id) => {
    const conn = choices.usable.find((c) => c.id === id);
    return conn !== undefined && conn.brand_id === values.brandId && values.platforms.includes(conn.platform_slug);
  });
}

function inputOf(values: ComposeValues, choices: Choices): Record<string, unknown> {
  const connections = chosenConnections(values, choices);
  const media = mediaItemsOf(values).map((m) => m.item);
  const text = optional(values.text);
  const title = optional(values.title);
  const modo = optional(values.modo);
  return {
    brand_id: values.brandId,
    target_platforms: values.platforms,
    ...(connections.length > 0 ? { target_connections: connections } : {}),
    content_type: values.contentType,
    ...(text !== undefined ? { text } : {}),
    ...(title !== undefined ? { title } : {}),
    ...(media.length > 0 ? { media } : {}),
    ...(values.contentType === 'thread' && values.thread.length > 0 ? { thread: values.thread } : {}),
    ...(values.threadSplit ? { thread_split: 'auto' } : {}),
    ...(values.threadNumbering ? { thread_numbering: true } : {}),
    ...(modo !== undefined ? { modo } : {}),
  };
}

/** Checks a person can act on before the core's, in plain words and all at once. */
function precheck(values: ComposeValues, choices: Choices): FieldErrors {
  const errors: FieldErrors = {};
  if (values.brandId === '') errors.brand_id = 'Choose a brand.';
  else if (!choices.brands.some((b) => b.id === values.brandId)) errors.brand_id = 'That brand no longer exists. Choose one of the list.';
  if (values.platforms.length === 0) errors.target_platforms = 'Choose at least one network.';
  values.platforms.forEach((slug, i) => {
    if (errors.brand_id || !(PLATFORM_SLUGS as readonly string[]).includes(slug)) return;
    if (!choices.usable.some((c) => c.brand_id === values.brandId && c.platform_slug === slug)) {
      const name = platformName(slug);
      errors[`target_platforms[${i}]`] = `This brand has no connection on ${name} yet. Connect one in Brands & connections, or untick ${name}.`;
    }
  });
  if (!(CONTENT_TYPES as readonly string[]).includes(values.contentType)) {
    errors.content_type = 'Choose a content type.';
    return errors;
  }
  const type = values.contentType as ContentType;
  if (type === 'thread' && values.thread.length === 0 && !(values.threadSplit && values.text.trim() !== '')) {
    errors.thread = 'Write at least one post, or write the text and tick “Split long text into a thread”.';
  }
  const kind = mediaKindOf(type);
  if (kind !== null && mediaItemsOf(values).length === 0) {
    errors.media = `A ${CONTENT_TYPE_LABELS[type].toLowerCase()} needs at least one media file: give its address or upload it.`;
  }
  return errors;
}

/** Zod's words for a bad address are terse; say what to type instead. */
function friendlier(errors: FieldErrors): FieldErrors {
  const out: FieldErrors = {};
  for (const [path, message] of Object.entries(errors)) {
    out[path] = /^media\[\d+\]\.url$/.test(path) ? 'Enter a full public address, starting with https://.' : message;
  }
  return out;
}

/** Where a caption_too_long belongs and what to say, from the request itself (the core names the platform). */
function captionError(err: ServiceError, input: CreateContentInput): FieldErrors {
  const slug = err.extra.platform_slug;
  if (typeof slug !== 'string' || !(slug in PLATFORMS)) return { [input.content_type === 'thread' ? 'thread' : 'text']: err.message };
  const info = PLATFORMS[slug as PlatformSlug];
  const titleMax = info.limits.titleMaxChars;
  if (input.title !== undefined && titleMax !== null && chars(input.title) > titleMax) {
    return { title: `The title is too long for ${info.name}: ${number(chars(input.title))} characters, the limit is ${number(titleMax)}.` };
  }
  const limit = info.limits.textMaxChars;
  if (input.content_type === 'thread' && input.thread) {
    const i = input.thread.findIndex((p) => chars(p) > limit);
    if (i >= 0) return { [`thread[${i}]`]: `Post ${i + 1} is too long for ${info.name}: ${number(chars(input.thread[i]!))} characters, the limit is ${number(limit)}.` };
    return { thread: err.message };
  }
  const length = input.text === undefined ? 0 : chars(input.text);
  if (length <= limit) return { [input.content_type === 'thread' ? 'thread' : 'text']: err.message };
  const split = info.limits.threadMaxPosts !== null;
  const how =
    split && input.thread_split === 'auto'
      ? ` It is too long even as a thread of ${info.limits.threadMaxPosts} posts: shorten it.`
      : split
        ? ' Shorten it, or tick “Split long text into a thread” to publish it as a chain of posts.'
        : ' Shorten it, or untick this network.';
  return { text: `Too long for ${info.name}: ${number(length)} characters, the limit is ${number(limit)}.${how}` };
}

/** A refusal of the core, placed next to the field it concerns (spec 7.2) or in the banner. */
function placeError(err: ServiceError, input: CreateContentInput): Outcome {
  const status = err.status;
  const fields = fieldErrorsOf(err);
  if (fields) return { errors: fields, status };
  switch (err.code) {
    case 'not_found':
      return { errors: { brand_id: err.message }, status };
    case 'caption_too_long':
      return { errors: captionError(err, input), status };
    case 'media_too_large': {
      // The core names the item as `media[i]` at the start of its message; the limit comes with the error.
      const index = /^media\[(\d+)\]/.exec(err.message)?.[1];
      const kind = mediaKindOf(input.content_type) ?? 'file';
      const limit = typeof err.extra.limit === 'number' ? ` at most ${bytes(err.extra.limit)}` : '';
      const message = `This file is larger than ${platformName(String(err.extra.platform_slug))} accepts for a ${kind}:${limit}.`;
      return { errors: { [index === undefined ? 'media' : `media[${index}]`]: message }, status };
    }
    case 'platform_not_supported': {
      const i = input.target_platforms.indexOf(err.extra.platform_slug as PlatformSlug);
      return { errors: { [i >= 0 ? `target_platforms[${i}]` : 'target_platforms']: `${err.message} Untick it or change the content type.` }, status };
    }
    case 'connections_required': {
      const offered = Array.isArray(err.extra.connections) ? (err.extra.connections as NonNullable<Outcome['offered']>) : [];
      const byPlatform = [...new Set(offered.map((c) => c.platform_slug))].map(
        (slug) => `${platformName(slug)}: ${offered.filter((c) => c.platform_slug === slug).map((c) => `${c.name} (${c.id})`).join(', ')}`,
      );
      return { offered, errors: { target_connections: `Choose which connection publishes. This brand has several on ${byPlatform.join('; ')}.` }, status };
    }
    default:
      return { banner: { message: explainServiceError(err), wallet: SALDO_CODES.has(err.code) }, status };
  }
}

/** Why an upload failed, in words for the Media field. */
function uploadError(err: unknown, truncated: boolean): { message: string; status: number } | null {
  if (truncated || err instanceof FileTooLarge) {
    return { message: `The file is larger than the dashboard accepts (${number(FORM_LIMITS.fileSize / GB)} GB). Put it at a public address and give that instead.`, status: 413 };
  }
  if (!(err instanceof ServiceError)) return null;
  const fields = Array.isArray(err.extra.fields) ? (err.extra.fields as { path?: unknown }[]) : [];
  if (err.code === 'validation_failed' && fields.some((f) => f.path === 'body')) {
    return { message: 'The file is empty. Choose the file again, or give its public address instead.', status: 400 };
  }
  if (err.code === 'validation_failed') return { message: 'This kind of file is not accepted. Upload a JPEG, PNG, WebP or GIF image, or an MP4, MOV or WebM video.', status: 400 };
  return { message: err.code === 'limit_reached' ? `The file does not fit. ${explainServiceError(err)}` : err.message, status: err.status };
}

/** Errors of `path` and of the items under it (`thread` → `thread[2]`), keyed by their full path. */
function errorsUnder(errors: FieldErrors, path: string): [string, string][] {
  return Object.entries(errors).filter(([k]) => k === path || k.startsWith(`${path}[`) || k.startsWith(`${path}.`));
}

function indexOf(path: string, prefix: string): number | null {
  const match = new RegExp(`^${prefix}\\[(\\d+)\\]`).exec(path);
  return match ? Number(match[1]) : null;
}

function attrs(describedBy: (string | false | undefined)[], invalid: boolean): SafeHtml {
  const ids = describedBy.filter((id): id is string => typeof id === 'string' && id !== '');
  return html`${ids.length > 0 ? html` aria-describedby="${ids.join(' ')}"` : ''}${invalid ? html` aria-invalid="true"` : ''}`;
}

/** `<textarea>` swallows one newline right after its tag: start with one so a leading newline survives. */
function textarea(options: { id: string; name: string; rows: number; value: string; maxlength: number; aria: SafeHtml }): SafeHtml {
  return html`<textarea id="${options.id}" name="${options.name}" rows="${options.rows}" maxlength="${options.maxlength}"${options.aria}>
${options.value}</textarea>`;
}

/** The counter's first text, as the script would write it for the networks ticked. */
function counterText(text: string, platforms: string[]): SafeHtml {
  const length = chars(text);
  const parts = PLATFORM_SLUGS.filter((slug) => platforms.includes(slug)).map((slug) => {
    const limit = PLATFORMS[slug].limits.textMaxChars;
    const label = `${PLATFORMS[slug].name} ${number(limit)}`;
    return length > limit ? html`<span class="over">${label}: too long</span>` : html`${label}`;
  });
  return html`${number(length)} characters${parts.length > 0 ? html` — ${parts.map((p, i) => html`${i > 0 ? ', ' : ''}${p}`)}` : ''}`;
}

function threadPost(n: number | 'new', value: string, error: string | undefined): SafeHtml {
  const id = `thread-${n}`;
  const label = n === 'new' ? 'New post' : `Post ${n}`;
  return html`<div class="thread-post${error ? ' invalid' : ''}">
  <label for="${id}">${label}</label>
  ${textarea({ id, name: 'thread', rows: 3, value, maxlength: 2000, aria: attrs([`${id}-count`, error && `${id}-error`], error !== undefined) })}
  <output class="counter" id="${id}-count" data-counter-for="${id}" data-limit="${THREAD_POST_CHARS}">${number(chars(value))} characters — of ${number(THREAD_POST_CHARS)}</output>
  <button type="button" data-thread-remove aria-label="Remove ${label.toLowerCase()}">Remove</button>
  ${error ? html`<p class="field-error" id="${id}-error">${error}</p>` : ''}
</div>`;
}

function previewSection(preview: Preview, choices: Choices): SafeHtml {
  const paragraphs = (text: string) => html`<p>${text.split('\n').map((line, i) => html`${i > 0 ? html`<br>` : ''}${line}`)}</p>`;
  const jobs = preview.jobs.map((job) => {
    const conn = choices.usable.find((c) => c.id === job.connection_id);
    return html`<h3>${platformName(job.platform_slug)}</h3>
<p class="muted">From ${conn ? conn.name : job.connection_id} — ${job.connection_mode === 'sandbox' ? 'sandbox: simulated, nothing reaches the network' : 'live'}</p>
${job.title ? html`<p><strong>Title:</strong> ${job.title}</p>` : ''}
${
  job.thread
    ? html`<p>A thread of ${job.thread.length} posts:</p><ol>${job.thread.map((post) => html`<li>${paragraphs(post)}</li>`)}</ol>`
    : job.text
      ? paragraphs(job.text)
      : html`<p class="muted">(no text)</p>`
}`;
  });
  const rows = preview.meters.map(
    (m) => html`<tr><th scope="row">${meterLabel(m.meter)}</th><td>${number(m.used)}</td><td>${number(m.consumes)}</td><td>${number(m.limit)}</td></tr>`,
  );
  return html`<section class="card" aria-labelledby="preview-h">
  <h2 id="preview-h">Preview</h2>
  <p role="status">Nothing was published or counted. Publish would send:</p>
  ${jobs}
  <h3>Plan meters</h3>
  ${table({ caption: 'Plan meters this would use', head: ['Meter', 'Used now', 'This would use', 'Limit'], rows, empty: 'No meters.' })}
</section>`;
}

function renderForm(ctx: PageContext, choices: Choices, values: ComposeValues, outcome: Outcome): SafeHtml {
  const errors = outcome.errors ?? {};
  const one = (path: string) => errors[path];

  // Networks: the list as a whole, or one network of it.
  const platformErrors = errorsUnder(errors, 'target_platforms');
  const badPlatforms = new Set<string>();
  const networksError = platformErrors
    .map(([path, message]) => {
      const i = indexOf(path, 'target_platforms');
      const slug = i === null ? undefined : values.platforms[i];
      if (slug === undefined) {
        PLATFORM_SLUGS.forEach((s) => badPlatforms.add(s));
        return message;
      }
      badPlatforms.add(slug);
      const name = platformName(slug);
      return message.includes(name) ? message : `${name}: ${message}`;
    })
    .join(' ');

  const brandError = one('brand_id');
  const brandSelect = html`<select id="brand_id" name="brand_id"${attrs(['brand_id-hint', brandError && 'brand_id-error'], brandError !== undefined)}>
  ${choices.brands.length > 1 ? html`<option value="">Choose…</option>` : ''}
  ${choices.brands.map((b) => html`<option value="${b.id}"${b.id === values.brandId ? html` selected` : ''}>${b.name}</option>`)}
</select>`;

  const networks = html`<fieldset class="field${networksError ? ' invalid' : ''}"${attrs(['networks-hint', networksError && 'networks-error'], false)}>
  <legend>Networks</legend>
  <p class="hint" id="networks-hint">One post per network, through the brand's connection there.</p>
  <div class="choices">
  ${PLATFORM_SLUGS.map((slug) => {
    const info = PLATFORMS[slug];
    const id = `platform-${slug}`;
    return html`<div class="field check">
    <input type="checkbox" id="${id}" name="target_platforms" value="${slug}"${values.platforms.includes(slug) ? html` checked` : ''}${attrs([`${id}-hint`, badPlatforms.has(slug) && 'networks-error'], badPlatforms.has(slug))}>
    <label for="${id}">${info.name}</label>
    <p class="hint" id="${id}-hint">Text up to ${number(info.limits.textMaxChars)} characters; ${info.contentTypes.join(', ')}.</p>
  </div>`;
  })}
  </div>
  ${networksError ? html`<p class="field-error" id="networks-error">${networksError}</p>` : ''}
</fieldset>`;

  // Connection choices, where a brand has several connections on one network.
  const groups = choices.brands.flatMap((brand) =>
    PLATFORM_SLUGS.map((slug) => ({ brand, slug, conns: choices.usable.filter((c) => c.brand_id === brand.id && c.platform_slug === slug) })).filter((g) => g.conns.length > 1),
  );
  const connectionErrors = errorsUnder(errors, 'target_connections');
  const offeredIds = new Set((outcome.offered ?? []).map((c) => c.id));
  const badIds = new Set(
    connectionErrors.flatMap(([path]) => {
      const i = indexOf(path, 'target_connections');
      const chosen = chosenConnections(values, choices);
      return i === null || chosen[i] === undefined ? [] : [chosen[i]];
    }),
  );
  const connectionsError = connectionErrors.map(([, m]) => m).join(' ');
  const connectionsSection =
    groups.length === 0
      ? ''
      : html`<fieldset class="field${connectionsError ? ' invalid' : ''}"${attrs(['connections-hint', connectionsError && 'connections-error'], false)}>
  <legend>Connections</legend>
  <p class="hint" id="connections-hint">Only where a brand has several connections on one network: choose the one to publish from.</p>
  ${groups.map((g, n) => {
    const id = `connection-${n + 1}`;
    const invalid = g.conns.some((c) => offeredIds.has(c.id) || badIds.has(c.id));
    return field({
      id,
      label: `Connection for ${PLATFORMS[g.slug].name} (${g.brand.name})`,
      control: html`<select id="${id}" name="connection"${attrs([invalid && connectionsError && 'connections-error'], invalid)}>
  <option value="">Choose…</option>
  ${g.conns.map((c) => html`<option value="${c.id}"${values.connections.includes(c.id) ? html` selected` : ''}>${c.name} (${c.mode}${c.status === 'expired' ? ', needs reconnecting' : ''})</option>`)}
</select>`,
    });
  })}
  ${connectionsError ? html`<p class="field-error" id="connections-error">${connectionsError}</p>` : ''}
</fieldset>`;

  const typeError = one('content_type');
  const titleError = one('title');
  const textError = one('text');
  const limits = Object.fromEntries(PLATFORM_SLUGS.map((s) => [s, PLATFORMS[s].limits.textMaxChars]));
  const names = Object.fromEntries(PLATFORM_SLUGS.map((s) => [s, PLATFORMS[s].name]));

  // Thread posts: the editor as a whole, or one post of it.
  const threadErrors = errorsUnder(errors, 'thread');
  const postErrors = new Map<number, string>();
  const threadError = threadErrors
    .flatMap(([path, message]) => {
      const i = indexOf(path, 'thread');
      if (i !== null && i < values.thread.length) {
        postErrors.set(i, message);
        return [];
      }
      return [message];
    })
    .join(' ');
  const posts = values.thread.length < THREAD_MAX_POSTS ? [...values.thread, ''] : values.thread;

  // Media: the fieldset as a whole, or the control an item came from.
  const items = mediaItemsOf(values);
  const controlErrors = new Map<string, string>();
  const mediaError = errorsUnder(errors, 'media')
    .flatMap(([path, message]) => {
      const i = indexOf(path, 'media');
      const control = i === null ? undefined : items[i]?.control;
      if (control === undefined) return [message];
      controlErrors.set(control, message);
      return [];
    })
    .join(' ');
  const fileError = one('media_file');
  const modoError = one('modo');

  return html`<form method="post" action="${COMPOSE}" enctype="multipart/form-data" class="card">
  ${csrfField(ctx.csrf)}
  <input type="hidden" name="idempotency_key" value="${randomUUID()}">
  ${field({ id: 'brand_id', label: 'Brand', hint: 'The brand whose connections publish the post.', error: brandError, control: brandSelect })}
  ${networks}
  ${connectionsSection}
  ${field({
    id: 'content_type',
    label: 'Content type',
    error: typeError,
    control: html`<select id="content_type" name="content_type"${attrs([typeError && 'content_type-error'], typeError !== undefined)}>
  ${CONTENT_TYPES.map((t) => html`<option value="${t}"${t === values.contentType ? html` selected` : ''}>${CONTENT_TYPE_LABELS[t]}</option>`)}
</select>`,
  })}
  ${field({
    id: 'title',
    label: 'Title',
    hint: 'Required for YouTube, at most 100 characters there.',
    error: titleError,
    control: html`<input id="title" name="title" type="text" maxlength="1000" value="${values.title}"${attrs(['title-hint', titleError && 'title-error'], titleError !== undefined)}>`,
  })}
  ${field({
    id: 'text',
    label: 'Text',
    hint: 'The post text, caption or video description.',
    error: textError,
    control: html`${textarea({ id: 'text', name: 'text', rows: 8, value: values.text, maxlength: 100_000, aria: attrs(['text-hint', 'text-count', textError && 'text-error'], textError !== undefined) })}
<output class="counter" id="text-count" data-counter-for="text" data-limits="${JSON.stringify(limits)}" data-names="${JSON.stringify(names)}">${counterText(values.text, values.platforms)}</output>`,
  })}
  <div class="field check">
    <input id="thread_split" name="thread_split" type="checkbox" value="auto"${values.threadSplit ? html` checked` : ''} aria-describedby="thread_split-hint">
    <label for="thread_split">Split long text into a thread</label>
    <p class="hint" id="thread_split-hint">On Threads only: a text over ${number(THREAD_POST_CHARS)} characters becomes a chain of up to ${THREAD_MAX_POSTS} posts, cut at sentence ends, instead of being refused.</p>
  </div>
  <div class="field check">
    <input id="thread_numbering" name="thread_numbering" type="checkbox" value="true"${values.threadNumbering ? html` checked` : ''}>
    <label for="thread_numbering">Number the posts (1/n)</label>
  </div>
  <div data-show-when-type="thread">
    <fieldset class="field${threadError ? ' invalid' : ''}"${attrs(['thread-hint', threadError && 'thread-error'], false)}>
      <legend>Thread posts</legend>
      <p class="hint" id="thread-hint">For the content type Thread: up to ${THREAD_MAX_POSTS} posts of at most ${number(THREAD_POST_CHARS)} characters, published as a chain on Threads. Empty posts are left out.</p>
      <div data-thread-editor data-max="${THREAD_MAX_POSTS}">
        <div data-thread-list>
          ${posts.map((post, i) => threadPost(i + 1, post, postErrors.get(i)))}
        </div>
        <template>${threadPost('new', '', undefined)}</template>
        <button type="button" data-thread-add>Add post</button>
      </div>
      ${threadError ? html`<p class="field-error" id="thread-error">${threadError}</p>` : ''}
    </fieldset>
  </div>
  <fieldset class="field${mediaError ? ' invalid' : ''}"${attrs(['media-hint', mediaError && 'media-error'], false)}>
    <legend>Media</legend>
    <p class="hint" id="media-hint">A photo, video or reel needs at least one file: give public addresses, or upload one file. At most 10 in all.</p>
    ${Array.from({ length: MEDIA_URL_INPUTS }, (_, i) => {
      const id = `media-url-${i + 1}`;
      const error = controlErrors.get(id);
      return field({
        id,
        label: `Media URL ${i + 1}`,
        error,
        control: html`<input id="${id}" name="media_url" type="url" maxlength="2048" value="${values.mediaUrls[i] ?? ''}"${attrs([error && `${id}-error`], error !== undefined)}>`,
      });
    })}
    ${values.mediaIds.map((mediaId, i) => {
      const id = `media-kept-${i + 1}`;
      const error = controlErrors.get(id);
      return html`<div class="field check${error ? ' invalid' : ''}">
      <input id="${id}" name="media_id" type="checkbox" value="${mediaId}" checked${attrs([error && `${id}-error`], error !== undefined)}>
      <label for="${id}">Use the file already uploaded (${mediaId})</label>
      ${error ? html`<p class="field-error" id="${id}-error">${error}</p>` : ''}
    </div>`;
    })}
    ${field({
      id: 'media_file',
      label: 'Upload a file',
      hint: 'JPEG, PNG, WebP or GIF images; MP4, MOV or WebM videos. It counts on your media storage.',
      error: fileError,
      control: html`<input id="media_file" name="media_file" type="file" accept="image/*,video/*"${attrs(['media_file-hint', fileError && 'media_file-error'], fileError !== undefined)}>`,
    })}
    ${mediaError ? html`<p class="field-error" id="media-error">${mediaError}</p>` : ''}
  </fieldset>
  ${field({
    id: 'modo',
    label: 'Pay with',
    hint: 'How the publications are paid for.',
    error: modoError,
    control: html`<select id="modo" name="modo"${attrs(['modo-hint', modoError && 'modo-error'], modoError !== undefined)}>
  <option value="">The workspace default (the plan)</option>
  ${MODOS.map((m) => html`<option value="${m}"${m === values.modo ? html` selected` : ''}>${MODO_LABELS[m]}</option>`)}
</select>`,
  })}
  <div class="actions">
    <button type="submit" class="primary">Publish</button>
    <button type="submit" name="intent" value="preview">Preview</button>
  </div>
</form>`;
}

async function loadChoices(ctx: PageContext): Promise<Choices> {
  const { services } = ctx.deps;
  const [brands, connections] = await Promise.all([services.brands.list(ctx.principal, ctx.workspaceId), services.connections.list(ctx.principal, ctx.workspaceId, {})]);
  return { brands, usable: connections.filter((c) => c.status !== 'inactive') };
}

function render(ctx: PageContext, choices: Choices, values: ComposeValues | null, outcome: Outcome = {}): PageResult {
  if (choices.brands.length === 0) {
    return {
      title: 'Compose',
      active: 'compose',
      body: html`<h1>Compose</h1>
<section class="card">
  <p>Publishing needs a brand with at least one connected network.</p>
  <p><a class="button primary" href="/dashboard/brands">Create a brand and connect a network</a></p>
</section>`,
    };
  }
  const errors = outcome.errors ?? {};
  const unplaced = Object.entries(errors)
    .filter(([path]) => !FIELD_PREFIXES.some((p) => path === p || path.startsWith(`${p}[`) || path.startsWith(`${p}.`)))
    .map(([path, message]) => (path === '_' ? message : `${path}: ${message}`));
  const banner = outcome.banner?.message ?? (unplaced.length > 0 ? unplaced.join(' ') : Object.keys(errors).length > 0 ? 'Nothing was published: see the messages next to the fields below.' : null);
  return {
    title: 'Compose',
    active: 'compose',
    status: outcome.status ?? 200,
    body: html`<h1>Compose</h1>
${errorBanner(banner, outcome.banner?.wallet ? html`<p><a href="/dashboard/wallet">Open the wallet</a></p>` : undefined)}
${choices.usable.length === 0 ? html`<p class="warn">No network is connected yet. <a href="/dashboard/brands">Connect one in Brands & connections</a> before publishing.</p>` : ''}
${outcome.preview ? previewSection(outcome.preview, choices) : ''}
${renderForm(ctx, choices, values ?? emptyValues(choices), outcome)}`,
  };
}

/**
 * Uploads of one form render, by its idempotency key: a double submit (a second click while the first is still
 * uploading) reuses the first upload, so the two requests stay identical and the second replays the first
 * instead of failing with idempotency_conflict.
 */
const recentUploads = new Map<string, { at: number; upload: Promise<UploadedMedia> }>();
const RECENT_UPLOAD_MS = 10 * 60_000;
const RECENT_UPLOAD_MAX = 500;

function uploadOnce(ctx: PageContext, file: IncomingFile, idempotencyKey: string | undefined): Promise<UploadedMedia> {
  const start = () => ctx.deps.services.media.upload(ctx.principal, ctx.workspaceId, file.mimeType, file.stream);
  if (idempotencyKey === undefined || !IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) return start();
  const now = Date.now();
  for (const [key, entry] of recentUploads) {
    if (now - entry.at <= RECENT_UPLOAD_MS && recentUploads.size <= RECENT_UPLOAD_MAX) break;
    recentUploads.delete(key);
  }
  const key = `${ctx.workspaceId} ${idempotencyKey} ${file.field}`;
  const earlier = recentUploads.get(key);
  if (earlier) {
    file.stream.resume();
    return earlier.upload;
  }
  const upload = start();
  recentUploads.set(key, { at: now, upload });
  // A failed upload may be tried again with the same form.
  upload.catch(() => recentUploads.delete(key));
  return upload;
}

/** Compose (spec 4.3): one form for every network, with preview, uploads and errors next to their fields. */
export function composePages(pages: PageRouter): void {
  pages.page(COMPOSE, async (ctx) => render(ctx, await loadChoices(ctx), null));

  pages.rawAction(COMPOSE, async (ctx) => {
    const read = await readForm<UploadedMedia>(ctx.req, {
      limits: FORM_LIMITS,
      accept: (first) => first.name === 'csrf' && pages.verifyCsrf(ctx, first.value),
      onFile: (file, fields) => uploadOnce(ctx, file, fields.idempotency_key?.[0]),
    });
    if (!read.accepted) throw new CsrfRefused();
    const choices = await loadChoices(ctx);
    const values = valuesOf(new FormFields(read.fields));

    let uploadFailure: { message: string; status: number } | null = null;
    for (const file of read.files) {
      if (file.result.status === 'fulfilled') {
        values.mediaIds.push(file.result.value.id);
        continue;
      }
      const failure = uploadError(file.result.reason as unknown, file.truncated);
      if (!failure) throw file.result.reason;
      uploadFailure = failure;
    }
    if (uploadFailure) return render(ctx, choices, values, { errors: { media_file: uploadFailure.message }, status: uploadFailure.status });
    if (read.overLimit) {
      return render(ctx, choices, values, { banner: { message: 'The form was larger than the dashboard accepts. Shorten the text or the thread and try again.', wallet: false }, status: 413 });
    }

    const early = precheck(values, choices);
    if (Object.keys(early).length > 0) return render(ctx, choices, values, { errors: early, status: 400 });
    const checked = check(createContentInputSchema, inputOf(values, choices));
    if (!checked.ok) return render(ctx, choices, values, { errors: friendlier(checked.errors), status: 400 });
    const input = checked.data;
    const { services } = ctx.deps;

    if (read.fields.intent?.[0] === 'preview') {
      try {
        return render(ctx, choices, values, { preview: await services.contents.preview(ctx.principal, ctx.workspaceId, input) });
      } catch (err) {
        if (err instanceof ServiceError) return render(ctx, choices, values, placeError(err, input));
        throw err;
      }
    }

    const key = read.fields.idempotency_key?.[0];
    let result;
    try {
      result = await services.contents.create(ctx.principal, ctx.workspaceId, input, key !== undefined && IDEMPOTENCY_KEY_PATTERN.test(key) ? key : undefined);
    } catch (err) {
      if (err instanceof ServiceError) return render(ctx, choices, values, placeError(err, input));
      throw err;
    }
    if (!result.outcome.ok) return render(ctx, choices, values, placeError(result.outcome.error, input));
    const created = result.outcome.value;
    const queued = `Queued for ${created.jobs.length} network${created.jobs.length === 1 ? '' : 's'}.`;
    return {
      redirect: `/dashboard/contents/${created.content_id}`,
      flash: result.replayed ? `This form was already sent: here is the content it created. ${queued}` : queued,
    };
  });
}

