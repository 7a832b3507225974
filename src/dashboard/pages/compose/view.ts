import { randomUUID } from 'node:crypto';
import { PAYMENT_MODE, PAYMENT_MODES } from '../../../core/wallet/wallet.schema.js';
import { MODE_CHOICES, MODE_WORDS } from '../../words.js';
import { networksFieldset } from './networks.js';
import { overridesSection } from './overrides.js';
import { tiktokFieldset } from './tiktok.js';
import { CONTENT_TYPES, type ContentType, PLATFORM_SLUGS, PLATFORMS } from '../../../vocabulary/platforms.js';
import { platformName } from '../../explain.js';
import { html, type SafeHtml } from '../../../web/html.js';
import { csrfField, errorBanner, field, number } from '../../layout.js';
import type { PageContext, PageResult } from '../../page-router.js';
import { bannerOf, errorsUnder, indexOf, type Outcome } from './errors.js';
import { previewSection } from './preview.js';
import { chars, COUNTINGS, networkCount } from './counter.js';
import { type When, WHEN_CHOICES, whenErrorOf, whenFieldset } from '../../when-field.js';
import { MEDIA_ITEMS_MAX } from '../../../core/contents/media-count.js';
import { type Choices, chosenConnections, COMPOSE, type ComposeValues, emptyValues, MEDIA_URL_INPUTS, mediaItemsOf, TITLE_TYPES, TITLED_NETWORKS } from './form.js';

/** The title's hint: each network that takes one, whether it must, and its limit. */
const TITLE_HINT = `For ${TITLED_NETWORKS.map((slug) => {
  const info = PLATFORMS[slug];
  return `${info.name} (${info.titleRequired ? 'required, ' : ''}at most ${info.limits.titleMaxChars ?? 0} characters)`;
})
  .join(', ')
  .replace(/, ([^,]*)$/, ' and $1')}.`;

const THREAD_MAX_POSTS = PLATFORMS.threads.limits.threadMaxPosts ?? 25;
const THREAD_POST_CHARS = PLATFORMS.threads.limits.textMaxChars;

export const CONTENT_TYPE_LABELS: Record<ContentType, string> = {
  text: 'Text only',
  photo: 'Photo',
  video: 'Video',
  reel: 'Reel (short video)',
  thread: 'Thread (a chain of posts, Threads only)',
};


/** The submit button says what it will do; the script relabels it as the When choice changes. */
const SUBMIT_LABELS: Record<When, string> = { now: 'Publish', schedule: 'Schedule', queue: 'Add to queue', draft: 'Save draft' };


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
  const parts = PLATFORM_SLUGS.filter((slug) => platforms.includes(slug)).map((slug) => {
    const { label, over } = networkCount(slug, text);
    return over ? html`<span class="over">${label}: too long</span>` : html`${label}`;
  });
  return html`${number(chars(text))} characters${parts.length > 0 ? html` — ${parts.map((p, i) => html`${i > 0 ? ', ' : ''}${p}`)}` : ''}`;
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
  ${choices.brands.map(
    (b) =>
      html`<option value="${b.id}" data-zone="${choices.zones[b.id] ?? 'UTC'}" data-suggest-date="${choices.suggested[b.id]?.date ?? ''}" data-suggest-time="${choices.suggested[b.id]?.time ?? ''}"${b.id === values.brandId ? html` selected` : ''}>${b.name}</option>`,
  )}
</select>`;

  const networks = networksFieldset({ choices, values, error: networksError, bad: badPlatforms, attrs });

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
  const modeError = one('modo');

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
  <div data-show-when-type="${TITLE_TYPES.join(' ')}" data-show-when-network="${TITLED_NETWORKS.join(' ')}">
  ${field({
    id: 'title',
    label: 'Title',
    hint: TITLE_HINT,
    error: titleError,
    control: html`<input id="title" name="title" type="text" maxlength="1000" value="${values.title}"${attrs(['title-hint', titleError && 'title-error'], titleError !== undefined)}>`,
  })}
  </div>
  <div data-show-when-type="text photo video reel">
  ${field({
    id: 'text',
    label: 'Text',
    hint: 'The post text, caption or video description.',
    error: textError,
    control: html`${textarea({ id: 'text', name: 'text', rows: 8, value: values.text, maxlength: 100_000, aria: attrs(['text-hint', 'text-count', textError && 'text-error'], textError !== undefined) })}
<output class="counter" id="text-count" data-counter-for="text" data-limits="${JSON.stringify(limits)}" data-countings="${JSON.stringify(COUNTINGS)}" data-names="${JSON.stringify(names)}">${counterText(values.text, values.platforms)}</output>`,
  })}
  </div>
  ${overridesSection(values, errors, textarea)}
  ${tiktokFieldset(values, errors)}
  <div data-show-when-type="text">
  <div class="field check">
    <input id="thread_split" name="thread_split" type="checkbox" value="auto"${values.threadSplit ? html` checked` : ''} aria-describedby="thread_split-hint">
    <label for="thread_split">Split long text into a thread</label>
    <p class="hint" id="thread_split-hint">On Threads only: a text over ${number(THREAD_POST_CHARS)} characters becomes a chain of up to ${THREAD_MAX_POSTS} posts, cut at sentence ends, instead of being refused.</p>
  </div>
  <div class="field check">
    <input id="thread_numbering" name="thread_numbering" type="checkbox" value="true"${values.threadNumbering ? html` checked` : ''}>
    <label for="thread_numbering">Number the posts (1/n)</label>
  </div>
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
  <div data-show-when-type="photo video reel">
  <fieldset class="field${mediaError ? ' invalid' : ''}"${attrs(['media-hint', mediaError && 'media-error'], false)}>
    <legend>Media</legend>
    <p class="hint" id="media-hint">A photo, video or reel needs at least one file: give public addresses, or upload files. A video or a reel takes one file; a photo post at most ${number(MEDIA_ITEMS_MAX)} in all, published in the order given: addresses first, then uploads.</p>
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
      label: 'Upload files',
      hint: 'JPEG, PNG, WebP or GIF images; MP4, MOV or WebM videos. Choose several at once to post them in the order chosen. Each counts on your media storage.',
      error: fileError,
      control: html`<input id="media_file" name="media_file" type="file" multiple accept="image/*,video/*"${attrs(['media_file-hint', fileError && 'media_file-error'], fileError !== undefined)}>`,
    })}
    ${mediaError ? html`<p class="field-error" id="media-error">${mediaError}</p>` : ''}
  </fieldset>
  </div>
  <details class="advanced"${values.mode !== '' || modeError ? html` open` : ''}>
  <summary>Advanced</summary>
  ${field({
    id: 'modo',
    label: 'Pay with',
    hint: 'How the publications are paid for. Most posts use the workspace default.',
    error: modeError,
    control: html`<select id="modo" name="modo"${attrs(['modo-hint', modeError && 'modo-error'], modeError !== undefined)}>
  <option value="">The workspace default (${MODE_WORDS[PAYMENT_MODE.plan]})</option>
  ${PAYMENT_MODES.map((m) => html`<option value="${m}"${m === values.mode ? html` selected` : ''}>${MODE_CHOICES[m]}</option>`)}
</select>`,
  })}
  </details>
  ${whenFieldset({
    choices: WHEN_CHOICES,
    values: values.when,
    zone: choices.zones[values.brandId] ?? null,
    zoneNote: '(the brand’s: its queue’s zone, else UTC). The date and time start at the brand’s next free queue slot, else tomorrow at 09:00.',
    error: whenErrorOf(errors),
    submitLabels: SUBMIT_LABELS,
    hints: { queue: 'At the brand’s next free queue slot (set on the brand’s queue page).', draft: 'Kept for later: nothing is published or counted.' },
  })}
  <div class="actions">
    <button type="submit" class="primary">${SUBMIT_LABELS[values.when.when]}</button>
    <button type="submit" name="intent" value="preview">Preview</button>
  </div>
</form>`;
}

/** The compose page: the form with the values typed, its errors placed, and a preview when asked. */
export function render(ctx: PageContext, choices: Choices, values: ComposeValues | null, outcome: Outcome = {}): PageResult {
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
  const banner = bannerOf(outcome);
  return {
    title: 'Compose',
    active: 'compose',
    status: outcome.status ?? 200,
    body: html`<h1>Compose</h1>
${errorBanner(banner, outcome.banner?.wallet ? html`<p><a href="/dashboard/wallet">Open the wallet</a></p>` : undefined, { focus: true })}
${choices.usable.length === 0 ? html`<p class="warn">No network is connected yet. <a href="/dashboard/brands">Connect one in Brands & connections</a> before publishing.</p>` : ''}
${outcome.preview ? previewSection(outcome.preview, choices, values ?? emptyValues(choices), outcome.previewImages ?? [], outcome.previewUploads ?? 0) : ''}
${renderForm(ctx, choices, values ?? emptyValues(choices), outcome)}`,
  };
}
