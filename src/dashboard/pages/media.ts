import { ServiceError } from '../../core/errors.js';
import { MEDIA_NEEDED_BY, type MediaItem, mediaListQuerySchema, type UploadedMedia } from '../../core/media/media.schema.js';
import { html, type SafeHtml } from '../../web/html.js';
import { check, optional } from '../forms.js';
import { actionButton, badge, bytes, errorBanner, isoDate } from '../layout.js';
import { FileTooLarge, type MultipartLimits, readForm } from '../multipart.js';
import { CsrfRefused, type PageContext, type PageResult, type PageRouter } from '../page-router.js';
import { uploadError } from './compose/uploads.js';

const MEDIA = '/dashboard/media';

/** One file per upload form, no text beyond the token; the file itself is bounded by the plan's media_storage. */
const UPLOAD_LIMITS: MultipartLimits = { fields: 4, fieldSize: 200, files: 1, fileSize: 4 * 1024 ** 3 };

/** The size a thumbnail is drawn at (the original file, scaled by the browser: no image library on the server). */
const THUMB = 160;

/** What a photo looks like in a list of contents or media: the file itself, scaled into a fixed box. */
export function mediaThumbnail(item: Pick<MediaItem, 'id' | 'content_type' | 'url'>, size = THUMB): SafeHtml {
  if (item.content_type.startsWith('image/')) {
    return html`<img class="thumb${size < THUMB ? ' small' : ''}" src="${item.url}" width="${size}" height="${size}" loading="lazy" alt="Uploaded image ${item.id}">`;
  }
  // The poster is the video's own first frame: the browser reads only the file's start (preload metadata), so no
  // frame extraction runs on the server. Without controls it is a still picture; the media page links the file.
  return html`<video class="thumb thumb-video${size < THUMB ? ' small' : ''}" src="${item.url}#t=0.1" preload="metadata" muted playsinline width="${size}" height="${size}" aria-label="Uploaded video ${item.id}"></video>`;
}

function kindWord(contentType: string): string {
  const [kind, sub] = contentType.split('/');
  return `${kind === 'image' ? 'Image' : 'Video'} (${(sub ?? '').toUpperCase().replace('QUICKTIME', 'MOV')})`;
}

function usedBy(item: MediaItem): SafeHtml {
  if (item.used_by.length === 0) return html`<p class="muted">Not used by any content yet.</p>`;
  return html`<p>Used by:</p><ul class="used-by">${item.used_by.map(
    (u) => html`<li><a href="/dashboard/contents/${u.content_id}">content ${u.content_id.slice(0, 8)}</a> ${badge(u.status)}</li>`,
  )}</ul>`;
}

function card(ctx: PageContext, item: MediaItem): SafeHtml {
  const needed = item.used_by.filter((u) => (MEDIA_NEEDED_BY as readonly string[]).includes(u.status));
  return html`<li class="media-card" id="${item.id}">
  <figure>
    ${mediaThumbnail(item)}
    <figcaption>
      <strong>${kindWord(item.content_type)}</strong>, ${bytes(item.size_bytes)}<br>
      <span class="muted">Uploaded ${isoDate(item.created_at)}</span><br>
      <code>${item.id}</code>
    </figcaption>
  </figure>
  ${usedBy(item)}
  <p class="actions">
    <a class="button" href="/dashboard/compose?${new URLSearchParams({ media_id: item.id }).toString()}" aria-label="Use in Compose: ${item.id}">Use in Compose</a>
    ${
      needed.length > 0
        ? html`<span class="muted">Kept while a ${needed[0]!.status} content needs it.</span>`
        : actionButton({ action: `${MEDIA}/${item.id}/delete`, csrf: ctx.csrf, label: 'Delete', danger: true, describe: `Delete ${item.id}`, confirm: `Delete ${item.id}? The file is removed and its space on your plan is freed.` })
    }
  </p>
</li>`;
}

/** The media library (issue 17): every upload with its thumbnail, size, type and users; upload, reuse, delete. */
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
    const usage = (await ctx.deps.services.meters.usage(ctx.workspaceId)).meters.find((m) => m.meter === 'media_storage');
    return {
      title: 'Media',
      active: 'media',
      status: extra.status ?? 200,
      body: html`<h1>Media</h1>
<p>Your uploaded photos and videos. Reuse one in a new post with <strong>Use in Compose</strong> instead of uploading it again.${usage ? html` Storage used: ${bytes(usage.used)} of ${bytes(usage.limit)}.` : ''}</p>
<section class="card" aria-labelledby="upload-h">
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
</section>
<section class="card" aria-labelledby="library-h">
  <h2 id="library-h">Library</h2>
  ${stale ? html`<p class="warn" role="status">That page link is not valid any more, so the newest uploads are shown.</p>` : ''}
  ${page.data.length === 0 ? html`<p class="empty">No uploads yet. Upload a photo or a video above, or attach one in Compose.</p>` : html`<ul class="media-grid">${page.data.map((m) => card(ctx, m))}</ul>`}
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
      const failure = uploadError(reason, file.truncated || reason instanceof FileTooLarge);
      if (!failure) throw reason;
      return renderLibrary(ctx, { error: failure.message, status: failure.status });
    }
    const stored = file.result.value;
    return { redirect: `${MEDIA}#${stored.id}`, flash: `Uploaded ${file.filename.slice(0, 100)} (${bytes(stored.size_bytes)}) as ${stored.id}.` };
  });

  pages.action(`${MEDIA}/:mediaId/delete`, async (ctx) => {
    const mediaId = ctx.params.mediaId!;
    try {
      await ctx.deps.services.media.remove(ctx.principal, ctx.workspaceId, mediaId);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'media_in_use') {
        const contents = (err.extra.contents ?? []) as { content_id: string; status: string }[];
        return { redirect: MEDIA, flash: `${mediaId} was not deleted: ${contents.length === 1 ? 'a' : contents.length} ${contents.map((c) => c.status).join(', ')} content${contents.length === 1 ? '' : 's'} still need${contents.length === 1 ? 's' : ''} it. Cancel or edit ${contents.length === 1 ? 'it' : 'them'} first.` };
      }
      throw err;
    }
    return { redirect: MEDIA, flash: `${mediaId} was deleted and its space freed.` };
  });
}
