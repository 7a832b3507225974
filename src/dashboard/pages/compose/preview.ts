import type { Preview } from '../../../core/contents/contents.schema.js';
import { meterLabel, platformName } from '../../explain.js';
import { html, type SafeHtml } from '../../../web/html.js';
import { number, table } from '../../layout.js';
import type { Choices } from './form.js';

/** What Publish would send, per network, and the plan meters it would use (nothing published or counted). */
export function previewSection(preview: Preview, choices: Choices): SafeHtml {
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
