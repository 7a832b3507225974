import type { Content, MediaItem } from '../../core/contents/contents.schema.js';
import { CONTENT_TYPES, PLATFORM_SLUGS, PLATFORMS, type PlatformSlug } from '../../vocabulary/platforms.js';
import { errorAt, type FieldErrors, optional } from '../forms.js';
import { html, type SafeHtml } from '../../web/html.js';
import { describedBy, field } from '../layout.js';
import type { PostedForm, PageContext } from '../page-router.js';
import { CONTENT_TYPE_LABELS } from './compose/view.js';

/**
 * The parts of the edit form of a draft or scheduled content beyond its text and time: the content type, the
 * networks, the media and each network's own text and title (the API's `overrides`). Each part is sent only when
 * it changed, so an edit of the shared text alone lets the core say which networks kept their own.
 */

/** What a person may pick from: the networks the brand can publish on, and the newest uploads of the library. */
export interface EditChoices {
  platforms: PlatformSlug[];
  uploads: { id: string; content_type: string }[];
}

/** How many of the library's newest uploads the form offers to add. */
const LIBRARY_CHOICES = 20;

/** The networks the content's brand has a usable connection on (and those it already targets), and recent uploads. */
export async function editChoices(ctx: PageContext, content: Content): Promise<EditChoices> {
  const { services } = ctx.deps;
  const [{ data: connections }, { data: uploads }] = await Promise.all([
    services.connections.list(ctx.principal, ctx.workspaceId, { brand_id: content.brand_id }),
    services.media.list(ctx.principal, ctx.workspaceId, { limit: LIBRARY_CHOICES }),
  ]);
  const usable = new Set<string>([...connections.filter((c) => c.status !== 'inactive').map((c) => c.platform_slug), ...content.target_platforms]);
  return { platforms: PLATFORM_SLUGS.filter((slug) => usable.has(slug)), uploads: uploads.map((u) => ({ id: u.id, content_type: u.content_type })) };
}

/** The edit form's content fields as sent (or as stored, before any submit). */
export interface ContentFieldsState {
  contentType: string;
  platforms: string[];
  /** Media kept, each as `media_id:<id>` or `url:<address>` (the checkbox values). */
  media: string[];
  addUrl: string;
  addUpload: string;
  overrides: Partial<Record<PlatformSlug, { text: string; title: string }>>;
}

const lines = (s: string) => s.replace(/\r\n?/g, '\n');

function mediaValue(item: MediaItem): string {
  return 'media_id' in item ? `media_id:${item.media_id}` : `url:${item.url}`;
}

function mediaItem(value: string): MediaItem | null {
  if (value.startsWith('media_id:')) return { media_id: value.slice('media_id:'.length) };
  if (value.startsWith('url:')) return { url: value.slice('url:'.length) };
  return null;
}

export function storedContentFields(content: Content): ContentFieldsState {
  return {
    contentType: content.content_type,
    platforms: [...content.target_platforms],
    media: content.media.map(mediaValue),
    addUrl: '',
    addUpload: '',
    overrides: Object.fromEntries(Object.entries(content.overrides ?? {}).map(([slug, o]) => [slug, { text: o.text ?? '', title: o.title ?? '' }])),
  };
}

/**
 * The content fields a submit sent; null when the form did not carry them (a post from a page of an earlier
 * version, or a client sending only the text): then they are left as stored, rather than read as all unticked.
 */
export function contentFieldsOf(form: PostedForm): ContentFieldsState | null {
  if (form.get('content_fields') !== 'shown') return null;
  return {
    contentType: form.get('content_type'),
    platforms: form.all('target_platforms'),
    media: form.all('media'),
    addUrl: form.get('media_url'),
    addUpload: form.get('media_upload'),
    overrides: Object.fromEntries(
      PLATFORM_SLUGS.flatMap((slug) => {
        const text = lines(form.get(`override_text_${slug}`));
        const title = form.get(`override_title_${slug}`);
        return text === '' && title === '' ? [] : [[slug, { text, title }]];
      }),
    ),
  };
}

type Overrides = NonNullable<Content['overrides']>;

/** The overrides typed for the networks chosen; empty boxes mean "the shared text" and are not sent. */
function overridesOf(state: ContentFieldsState): Overrides {
  const out: Overrides = {};
  for (const slug of PLATFORM_SLUGS) {
    const typed = state.overrides[slug];
    if (!typed || !state.platforms.includes(slug)) continue;
    const text = optional(typed.text);
    const title = PLATFORMS[slug].limits.titleMaxChars !== null ? optional(typed.title) : undefined;
    if (text !== undefined || title !== undefined) out[slug] = { ...(text !== undefined ? { text } : {}), ...(title !== undefined ? { title } : {}) };
  }
  return out;
}

/** Same overrides, whatever the key order. */
function sameOverrides(a: Overrides, b: Overrides): boolean {
  const norm = (o: Overrides) => JSON.stringify(PLATFORM_SLUGS.filter((s) => o[s]).map((s) => [s, o[s]!.text ?? null, o[s]!.title ?? null]));
  return norm(a) === norm(b);
}

/** The changed content fields, as `PATCH` takes them; `null` clears media or overrides. */
export function contentFieldsPatch(content: Content, state: ContentFieldsState): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  if (state.contentType !== content.content_type) patch.content_type = state.contentType;
  const platforms = PLATFORM_SLUGS.filter((slug) => state.platforms.includes(slug));
  const same = platforms.length === content.target_platforms.length && platforms.every((p) => content.target_platforms.includes(p));
  if (!same) patch.target_platforms = platforms;
  const media = [
    ...state.media.map(mediaItem).filter((m): m is MediaItem => m !== null),
    ...(optional(state.addUrl) !== undefined ? [{ url: optional(state.addUrl)! }] : []),
    ...(state.addUpload !== '' ? [{ media_id: state.addUpload }] : []),
  ];
  if (JSON.stringify(media) !== JSON.stringify(content.media)) patch.media = media.length > 0 ? media : null;
  const overrides = overridesOf(state);
  if (!sameOverrides(overrides, content.overrides ?? {})) patch.overrides = Object.keys(overrides).length > 0 ? overrides : null;
  return patch;
}

/** Paths of errors this part of the form shows next to its own controls. */
export function isContentFieldPath(path: string): boolean {
  return /^(content_type|target_platforms|target_connections|media|overrides)([.[]|$)/.test(path);
}

function mediaLabel(value: string, uploads: EditChoices['uploads']): string {
  if (value.startsWith('url:')) return `The file at ${value.slice(4)}`;
  const id = value.slice('media_id:'.length);
  const known = uploads.find((u) => u.id === id);
  return `Uploaded file ${id}${known ? ` (${known.content_type})` : ''}`;
}

/** The type, networks, media and per-network texts of the edit form. */
export function contentFieldsSection(content: Content, state: ContentFieldsState, choices: EditChoices, errors: FieldErrors): SafeHtml {
  const typeError = errorAt(errors, 'content_type');
  const networksError = errorAt(errors, 'target_platforms') ?? errorAt(errors, 'target_connections');
  const mediaError = errorAt(errors, 'media');
  const offered = PLATFORM_SLUGS.filter((slug) => choices.platforms.includes(slug) || state.platforms.includes(slug));
  const own = PLATFORM_SLUGS.filter((slug) => state.overrides[slug] !== undefined);
  const overrideErrors = Object.keys(errors).some((p) => p.startsWith('overrides'));
  return html`<input type="hidden" name="content_fields" value="shown">
  ${field({
    id: 'edit-type',
    label: 'Content type',
    error: typeError,
    control: html`<select id="edit-type" name="content_type"${describedBy('edit-type', { error: typeError })}>
  ${CONTENT_TYPES.map((t) => html`<option value="${t}"${t === state.contentType ? html` selected` : ''}>${CONTENT_TYPE_LABELS[t]}</option>`)}
</select>`,
  })}
  <fieldset class="field${networksError ? ' invalid' : ''}"${describedBy('edit-networks', { hint: true, error: networksError })}>
    <legend>Networks</legend>
    <p class="hint" id="edit-networks-hint">The networks this brand is connected to. <a href="/dashboard/brands#brand-${content.brand_id}">Connect another</a></p>
    ${offered.map(
      (slug) => html`<div class="field check">
      <input type="checkbox" id="edit-platform-${slug}" name="target_platforms" value="${slug}"${state.platforms.includes(slug) ? html` checked` : ''}>
      <label for="edit-platform-${slug}">${PLATFORMS[slug].name}</label>
    </div>`,
    )}
    ${networksError ? html`<p class="field-error" id="edit-networks-error">${networksError}</p>` : ''}
  </fieldset>
  <fieldset class="field${mediaError ? ' invalid' : ''}"${describedBy('edit-media', { hint: true, error: mediaError })}>
    <legend>Media</legend>
    <p class="hint" id="edit-media-hint">A photo, video or reel needs at least one file; untick one to leave it out. Upload new files in the <a href="/dashboard/media">media library</a> first.</p>
    ${state.media.map(
      (value, i) => html`<div class="field check">
      <input type="checkbox" id="edit-media-${i + 1}" name="media" value="${value}" checked>
      <label for="edit-media-${i + 1}">${mediaLabel(value, choices.uploads)}</label>
    </div>`,
    )}
    ${field({ id: 'edit-media-url', label: 'Add a file by its public address', control: html`<input id="edit-media-url" name="media_url" type="url" maxlength="2048" value="${state.addUrl}">` })}
    ${
      choices.uploads.length > 0
        ? field({
            id: 'edit-media-upload',
            label: 'Add an uploaded file',
            control: html`<select id="edit-media-upload" name="media_upload">
  <option value="">None</option>
  ${choices.uploads.map((u) => html`<option value="${u.id}"${u.id === state.addUpload ? html` selected` : ''}>${u.id} (${u.content_type})</option>`)}
</select>`,
          })
        : ''
    }
    ${mediaError ? html`<p class="field-error" id="edit-media-error">${mediaError}</p>` : ''}
  </fieldset>
  <details class="overrides"${own.length > 0 || overrideErrors ? html` open` : ''}>
    <summary>Text per network${own.length > 0 ? ` (${own.map((s) => PLATFORMS[s].name).join(', ')} ${own.length === 1 ? 'has its' : 'have their'} own)` : ''}</summary>
    <p class="hint" id="edit-overrides-hint">A network with its own text keeps it when you change the text above. Empty a box to use the shared text there.</p>
    ${offered.map((slug) => {
      const info = PLATFORMS[slug];
      const typed = state.overrides[slug];
      const textError = errors[`overrides.${slug}.text`] ?? errors[`overrides.${slug}`];
      const titleError = errors[`overrides.${slug}.title`];
      return html`<fieldset class="tab-panel">
      <legend>${info.name}</legend>
      ${
        info.limits.titleMaxChars !== null
          ? field({
              id: `edit-override-title-${slug}`,
              label: `Title on ${info.name}`,
              error: titleError,
              control: html`<input id="edit-override-title-${slug}" name="override_title_${slug}" type="text" maxlength="1000" value="${typed?.title ?? ''}"${describedBy(`edit-override-title-${slug}`, { error: titleError })}>`,
            })
          : ''
      }
      ${field({
        id: `edit-override-text-${slug}`,
        label: `Text on ${info.name}`,
        error: textError,
        control: html`<textarea id="edit-override-text-${slug}" name="override_text_${slug}" rows="3" maxlength="100000" aria-describedby="edit-overrides-hint${textError ? ` edit-override-text-${slug}-error` : ''}"${textError ? html` aria-invalid="true"` : ''}>
${typed?.text ?? ''}</textarea>`,
      })}
    </fieldset>`;
    })}
  </details>`;
}
