import type { Preview } from '../../../core/contents/contents.schema.js';
import { PLATFORMS, type PlatformSlug } from '../../../vocabulary/platforms.js';
import { html, type SafeHtml } from '../../../web/html.js';
import { number, table } from '../../layout.js';
import { handleOf } from '../../names.js';
import { meterShown, meterWord } from '../../words.js';
import { type Choices, type ComposeValues, MEDIA_TYPES, mediaItemsOf } from './form.js';

/**
 * How each network shows a post in its feed: how many characters before "…see more", and the frame a photo or
 * video is cropped to. Approximations of the networks' own apps (they change them); a null fold shows all.
 */
const LOOK: Record<PlatformSlug, { fold: number | null; aspect: Record<'photo' | 'video' | 'reel', string> }> = {
  instagram: { fold: 125, aspect: { photo: '4:5', video: '9:16', reel: '9:16' } },
  facebook: { fold: 480, aspect: { photo: '4:5', video: '16:9', reel: '9:16' } },
  threads: { fold: null, aspect: { photo: '4:5', video: '9:16', reel: '9:16' } },
  youtube: { fold: 100, aspect: { photo: '16:9', video: '16:9', reel: '9:16' } },
  linkedin: { fold: 210, aspect: { photo: '1.91:1', video: '16:9', reel: '9:16' } },
  x: { fold: null, aspect: { photo: '16:9', video: '16:9', reel: '9:16' } },
  bluesky: { fold: null, aspect: { photo: '4:3', video: '16:9', reel: '9:16' } },
  mastodon: { fold: null, aspect: { photo: '16:9', video: '16:9', reel: '9:16' } },
  tiktok: { fold: 100, aspect: { photo: '9:16', video: '9:16', reel: '9:16' } },
  pinterest: { fold: 60, aspect: { photo: '2:3', video: '2:3', reel: '9:16' } },
};

function lines(text: string): SafeHtml {
  return html`${text.split('\n').map((line, i) => html`${i > 0 ? html`<br>` : ''}${line}`)}`;
}

/** The text as the feed shows it: cut at the network's fold, the rest behind "…see more" (a <details>, no script). */
export function folded(text: string, fold: number | null): SafeHtml {
  const chars = Array.from(text);
  if (fold === null || chars.length <= fold) return html`<p class="mock-text">${lines(text)}</p>`;
  return html`<details class="mock-fold">
  <summary><span class="mock-text">${lines(chars.slice(0, fold).join(''))}</span><span class="see-more">…see more</span></summary>
  <span class="mock-text">${lines(chars.slice(fold).join(''))}</span>
</details>`;
}

/** One post of the mock-up: the account's header, then what the feed shows. */
function mockPost(slug: PlatformSlug, account: { name: string; handle: string | null; sandbox: boolean }, body: SafeHtml, label: string): SafeHtml {
  const initial = Array.from(account.name.replace(/^@/, ''))[0]?.toUpperCase() ?? '?';
  return html`<article class="mock mock-${slug}" aria-label="${label}">
  <header class="mock-head"><span class="avatar" aria-hidden="true">${initial}</span><span><strong>${account.name}</strong>${
    account.handle && account.handle !== account.name ? html` <span class="muted">${account.handle}</span>` : ''
  }${account.sandbox ? html` <span class="tag">sandbox</span>` : ''}</span></header>
  ${body}
</article>`;
}

/** The media frames of a post: one box per item at the network's crop. */
function frames(slug: PlatformSlug, type: string, count: number, images: readonly (string | null)[]): SafeHtml {
  if (!MEDIA_TYPES.includes(type) || count === 0) return html``;
  const kind = type as 'photo' | 'video' | 'reel';
  const aspect = LOOK[slug].aspect[kind];
  return html`<div class="mock-media">${Array.from(
    { length: Math.min(count, 3) },
    (_, i) => html`<div class="crop crop-${aspect.replace(/[.:]/g, (c) => (c === ':' ? 'x' : ''))}" role="img" aria-label="${kind} ${i + 1}, cropped to ${aspect}">${
      images[i] ? html`<img src="${images[i]}" alt="">` : html`<span>${kind} ${i + 1} · ${aspect}</span>`
    }</div>`,
  )}${count > 3 ? html`<p class="muted">+${count - 3} more</p>` : ''}</div>`;
}

/**
 * What Publish would send, as each network would show it: the account's name and handle, the
 * text folded where the network folds it, a thread as its posts, media at the network's crop, YouTube's title.
 * Then the plan meters it would use. Nothing is published or counted on the plan; a file chosen is in the library.
 */
export function previewSection(preview: Preview, choices: Choices, values: ComposeValues, images: readonly (string | null)[], uploads: number): SafeHtml {
  const mediaCount = mediaItemsOf(values).length;
  const jobs = preview.jobs.map((job) => {
    const slug = job.platform_slug;
    const info = PLATFORMS[slug];
    const conn = choices.usable.find((c) => c.id === job.connection_id);
    const account = { name: conn?.name ?? job.connection_id, handle: conn ? handleOf(conn) : null, sandbox: job.connection_mode === 'sandbox' };
    const posts = job.thread
      ? job.thread.map((post, i) => mockPost(slug, account, folded(post, LOOK[slug].fold), `${info.name}, post ${i + 1} of ${job.thread!.length}`))
      : [
          mockPost(
            slug,
            account,
            html`${frames(slug, preview.content_type, mediaCount, images)}${job.title ? html`<p class="mock-title">${job.title}</p>` : ''}${
              job.text ? folded(job.text, LOOK[slug].fold) : html`<p class="muted">(no caption)</p>`
            }`,
            `${info.name} post`,
          ),
        ];
    return html`<section class="mock-network" aria-labelledby="preview-${slug}-h">
  <h3 id="preview-${slug}-h">${info.name}${job.thread ? html` <span class="muted">— a thread of ${job.thread.length} posts</span>` : ''}</h3>
  <p class="muted">${job.connection_mode === 'sandbox' ? 'Sandbox: simulated, nothing reaches the network.' : 'Live account.'}${
    LOOK[slug].fold !== null ? ` The feed shows about ${number(LOOK[slug].fold)} characters before “see more”.` : ''
  }</p>
  <div class="mock-thread">${posts}</div>
</section>`;
  });
  const rows = preview.meters
    .filter((m) => meterShown(m.meter))
    .map((m) => html`<tr><th scope="row">${meterWord(m.meter)}</th><td>${number(m.used)}</td><td>${number(m.consumes)}</td><td>${number(m.limit)}</td></tr>`);
  // Focused on load (tabindex and the page's script): after Preview, the person is taken to what they asked for.
  return html`<section class="card" aria-labelledby="preview-h" id="preview" tabindex="-1" data-focus-on-load>
  <h2 id="preview-h">Preview</h2>
  <p role="status">${
    // The file is stored as the form is read, before its intent is known: the preview says what happened to it.
    uploads > 0
      ? `Nothing was published or counted on your plan. ${uploads === 1 ? 'The file you chose was added to your media library (it counts on your media storage) and stays' : 'The files you chose were added to your media library (they count on your media storage) and stay'} ticked below.`
      : 'Nothing was published or counted.'
  } This is how each network would show it:</p>
  <div class="mock-grid">${jobs}</div>
  <h3>Plan meters</h3>
  ${table({ caption: 'Plan meters this would use', head: ['Meter', 'Used now', 'This would use', 'Limit'], rows, empty: 'No meters.' })}
</section>`;
}
