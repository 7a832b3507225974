import { ServiceError } from '../../core/errors.js';
import { allows } from '../../core/permissions/authorize.js';
import { MEDIA_NEEDED_BY, type MediaItem, mediaListQuerySchema, type UploadedMedia } from '../../core/media/media.schema.js';
import { html, type SafeHtml } from '../../web/html.js';
import { check, optional } from '../forms.js';
import { actionButton, badge, bytes, errorBanner, isoDate } from '../layout.js';
import { contentTitle } from '../names.js';
import { FileTooLarge, type MultipartLimits, readForm } from '../multipart.js';
import { CsrfRefused, type PageContext, type PageResult, type PageRouter } from '../page-router.js';
import { uploadError } from './compose/uploads.js';

const MEDIA = '/dashboard/media';

/** One file per upload form, no text beyond the token; the file itself is bounded by the plan's media_storage. */
const UPLOAD_LIMITS: MultipartLimits = { fields: 4, fieldSize: 200, files: 1, fileSize: 4 * 1024 ** 3 };

/** The size a thumbnail is drawn at (the original file, scaled by the browser: no image library on the server). */
const THUMB = 160;

/** How many contents using one upload are named on its card; the rest are counted. */
const USERS_NAMED = 5;

const UPLOAD_DAY = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' });

/**
 * What a person calls an upload. The original file name is not kept (an upload is stored under its id only), so
 * it is named by what it is, its size and when it came: "Image (JPEG), 2.0 KB, uploaded 28 Nov 2026, 09:00 UTC".
 */
export function mediaName(item: Pick<MediaItem, 'content_type' | 'size_bytes' | 'created_at'>): string {
  return `${kindWord(item.content_type)}, ${bytes(item.size_bytes)}, uploaded ${UPLOAD_DAY.format(new Date(item.created_at))} UTC`;
}

/** What a photo looks like in a list of contents or media: the file itself, scaled into a fixed box. */
export function mediaThumbnail(item: Pick<MediaItem, 'id' | 'content_type' | 'url'> & Partial<Pick<MediaItem, 'size_bytes' | 'created_at'>>, size = THUMB): SafeHtml {
  const label = item.size_bytes !== undefined && item.created_at !== undefined ? mediaName({ content_type: item.content_type, size_bytes: item.size_bytes, created_at: item.created_at }) : kindWord(item.content_type);
  if (item.content_type.startsWith('image/')) {
    return html`<img class="thumb${size < THUMB ? ' small' : ''}" src="${item.url}" width="${size}" height="${size}" loading="lazy" alt="${label}">`;
  }
  // The poster is the video's own first frame: the browser reads only the file's start (preload metadata), so no
  // frame extraction runs on the server. Without controls it is a still picture; the media page links the file.
  return html`<video class="thumb thumb-video${size < THUMB ? ' small' : ''}" src="${item.url}#t=0.1" preload="metadata" muted playsinline width="${size}" height="${size}" aria-label="${label}"></video>`;
}

function kindWord(contentType: string): string {
  const [kind, sub] = contentType.split('/');
  return `${kind === 'image' ? 'Image' : 'Video'} (${(sub ?? '').toUpperCase().replace('QUICKTIME', 'MOV')})`;
}

/** Titles of the contents the cards name (the first line of each text, as the contents list shows them). */
async function titlesOf(ctx: PageContext, items: readonly MediaItem[]): Promise<Map<string, string>> {
  const ids = [...new Set(items.flatMap((m) => m.used_by.slice(0, USERS_NAMED).map((u) => u.content_id)))];
  const titles = await Promise.all(
    ids.map(async (id) => {
      try {
        return [id, contentTitle(await ctx.deps.services.contents.get(ctx.principal, ctx.workspaceId, id))] as const;
      } catch (err) {
        if (err instanceof ServiceError && err.code === 'not_found') return null;
        throw err;
      }
    }),
  );
  return new Map(titles.filter((t) => t !== null));
}

function usedBy(item: MediaItem, titles: ReadonlyMap<string, string>): SafeHtml {
  if (item.used_by.length === 0) return html`<p class="muted">Not used by any content yet.</p>`;
  const more = item.used_by.length - USERS_NAMED;
  return html`<p>Used by:</p><ul class="used-by">${item.used_by.slice(0, USERS_NAMED).map(
    (u) => html`<li><a href="/dashboard/contents/${u.content_id}">${titles.get(u.content_id) ?? 'A content'}</a> ${badge(u.status)}</li>`,
  )}${more > 0 ? html`<li class="muted">and ${more} more content${more === 1 ? '' : 's'}</li>` : ''}</ul>`;
}

function card(ctx: PageContext, item: MediaItem, titles: ReadonlyMap<string, string>): SafeHtml {
  const name = mediaName(item);
  const needed = item.used_by.filter((u) => (MEDIA_NEEDED_BY as readonly string[]).includes(u.status));
  return html`<li class="media-card" id="${item.id}">
  <figure>
    ${mediaThumbnail(item)}
    <figcaption>
      <strong>${kindWord(item.content_type)}</strong>, ${bytes(item.size_bytes)}<br>
      <span class="muted">Uploaded ${isoDate(item.created_at)}</span><br>
      <span class="muted">Reference <code>${item.id}</code></span>
    </figcaption>
  </figure>
  ${usedBy(item, titles)}
  <p class="actions">
    <a class="button" href="/dashboard/compose?${new URLSearchParams({ media_id: item.id }).toString()}" aria-label="Use in Compose: ${name}">Use in Compose</a>
    ${
      needed.length > 0
        ? html`<span class="muted">Kept while a ${needed[0]!.status} content needs it.</span>`
        : !allows(ctx.principal, 'media.delete')
          ? ''
          : actionButton({ action: `${MEDIA}/${item.id}/delete`, csrf: ctx.csrf, label: 'Delete', danger: true, describe: `Delete ${name}`, confirm: `Delete ${name}? The file is removed and its space on your plan is freed.` })
    }
  </p>
</li>`;
}

/** The media library (README, Media library): every upload with its thumbnail, size, type and users; upload, reuse, delete. */
export function mediaPages(pages: PageRouter): void {
  async function renderLibrary(ctx: PageContext, extra: { error?: string; status?: number } = {}): Promise<PageResult> {
    const wanted = check(mediaListQuerySchema, { limit: 24, cursor: optional(ctx.query.cursor ?? '') });
    const query = wanted.ok ? wanted.data : { limit: 24 };
    let page;
    let stale = !wanted.ok;
    try {
      page = await ctx.deps.services.media.list(ctx.principal, ctx.workspaceId, query);
    } catch (err) {
      if (!(err instanceof ServiceError) || err.code !== 'validation_failed') throw err;
      stale = true;
      page = await ctx.deps.services.media.list(ctx.principal, ctx.workspaceId, { limit: 24 });
    }
    const titles = await titlesOf(ctx, page.data);
    const usage = (await ctx.deps.services.meters.usage(ctx.workspaceId)).meters.find((m) => m.meter === 'media_storage');
    return {
      title: 'Media',
      active: 'media',
      status: extra.status ?? 200,
      body: html`<h1>Media</h1>
<p>Your uploaded photos and videos. Reuse one in a new post with <strong>Use in Compose</strong> instead of uploading it again.${usage ? html` Storage used: ${bytes(usage.used)} of ${bytes(usage.limit)}.` : ''}</p>
${
  !allows(ctx.principal, 'media.upload')
    ? ''
    : html`<section class="card" aria-labelledby="upload-h">
  <h2 id="upload-h">Upload</h2>
  ${errorBanner(extra.error)}
  <form method="post" action="${MEDIA}" enctype="multipart/form-data" class="actions">
    <input type="hidden" name="csrf" value="${ctx.csrf}">
    <div class="field">
      <label for="media-file">Photo or video</label>
      <p class="hint" id="media-file-hint">JPEG, PNG, WebP or GIF images; MP4, MOV or WebM videos.</p>
      <input id="media-file" name="file" type="file" required accept="image/jpeg,image/png,image/webp,image/gif,video/mp4,video/quicktime,video/webm" aria-describedby="media-file-hint">
    </div>
    <button type="submit" class="primary">Upload</button>
  </form>
</section>`
}
<section class="card" aria-labelledby="library-h">
  <h2 id="library-h">Library</h2>
  ${stale ? html`<p class="warn" role="status">That page link is not valid any more, so the newest uploads are shown.</p>` : ''}
  ${page.data.length === 0 ? html`<p class="empty">No uploads yet. Upload a photo or a video above, or attach one in Compose.</p>` : html`<ul class="media-grid">${page.data.map((m) => card(ctx, m, titles))}</ul>`}
  <p class="actions">
    ${query.cursor !== undefined && !stale ? html`<a href="${MEDIA}">Newest uploads</a>` : ''}
    ${page.next_cursor ? html`<a href="${MEDIA}?${new URLSearchParams({ cursor: page.next_cursor }).toString()}">Older uploads</a>` : ''}
  </p>
</section>`,
    };
  }

  pages.page(MEDIA, (ctx) => renderLibrary(ctx));

  pages.rawAction(MEDIA, async (ctx) => {
    const read = await readForm<UploadedMedia>(ctx.req, {
      limits: UPLOAD_LIMITS,
      accept: (first) => first.name === 'csrf' && pages.verifyCsrf(ctx, first.value),
      onFile: (file) => ctx.deps.services.media.upload(ctx.principal, ctx.workspaceId, file.mimeType, file.stream),
    });
    if (!read.accepted) throw new CsrfRefused();
    const [file] = read.files;
    if (!file) return renderLibrary(ctx, { error: 'Choose a photo or a video to upload.', status: 400 });
    if (file.result.status === 'rejected') {
      const reason = file.result.reason as unknown;
      // A role that may not upload is shown no upload form, so the message would have nowhere to appear: the
      // refusal page names the permission instead, as for every other action.
      if (reason instanceof ServiceError && reason.code === 'forbidden') throw reason;
      const failure = uploadError(reason, file.truncated || reason instanceof FileTooLarge);
      if (!failure) throw reason;
      return renderLibrary(ctx, { error: failure.message, status: failure.status });
    }
    const stored = file.result.value;
    return { redirect: `${MEDIA}#${stored.id}`, flash: `Uploaded ${file.filename.slice(0, 100)}: it is listed as “${mediaName(stored)}”.` };
  });

  pages.action(`${MEDIA}/:mediaId/delete`, async (ctx) => {
    const mediaId = ctx.params.mediaId!;
    let name = mediaId;
    try {
      name = mediaName(await ctx.deps.services.media.get(ctx.principal, ctx.workspaceId, mediaId));
      await ctx.deps.services.media.remove(ctx.principal, ctx.workspaceId, mediaId);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'media_in_use') {
        const contents = (err.extra.contents ?? []) as { content_id: string; status: string }[];
        return { redirect: MEDIA, flash: `“${name}” was not deleted: ${contents.length === 1 ? 'a' : contents.length} ${contents.map((c) => c.status).join(', ')} content${contents.length === 1 ? '' : 's'} still need${contents.length === 1 ? 's' : ''} it. Cancel or edit ${contents.length === 1 ? 'it' : 'them'} first.` };
      }
      throw err;
    }
    return { redirect: MEDIA, flash: `“${name}” was deleted and its space freed.` };
  });
}
