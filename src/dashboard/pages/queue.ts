import { ServiceError } from '../../core/errors.js';
import { type Weekday } from '../../core/scheduling/queue-slots.js';
import { MAX_QUEUE_SLOTS, type Queue, queueInputSchema } from '../../core/scheduling/queue.schema.js';
import { html, type SafeHtml } from '../../web/html.js';
import { explainServiceError } from '../explain.js';
import { check, type FieldErrors, fieldErrorsOf } from '../forms.js';
import { csrfField, describedBy, errorBanner, field, isoDate, table } from '../layout.js';
import { zoneInput } from '../zone-field.js';
import type { PageContext, PageResult, PageRouter } from '../page-router.js';

/** Empty slot rows offered below the saved ones, so a slot can be added without a script. */
const SPARE_ROWS = 2;

/** Monday first, as people read a week. */
const WEEK: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const DAY_NAMES: Record<Weekday, string> = { sun: 'Sunday', mon: 'Monday', tue: 'Tuesday', wed: 'Wednesday', thu: 'Thursday', fri: 'Friday', sat: 'Saturday' };

/** "10 posting times a week (2 slots on 5 days)": a slot posts once on each of its days. */
function postingTimes(slots: readonly { days: readonly string[] }[]): string {
  const times = slots.reduce((n, slot) => n + slot.days.length, 0);
  const days = new Set(slots.flatMap((slot) => slot.days)).size;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(times, 'posting time')} a week (${plural(slots.length, 'slot')} on ${plural(days, 'day')})`;
}

interface SlotRow {
  days: string[];
  time: string;
}

/** The form as sent, with errors placed by row (`slots[i]` of the request is row `rowOf[i]`). */
interface QueueFormState {
  timeZone: string;
  rows: SlotRow[];
  errors: FieldErrors;
  banner?: string;
}

const queueUrl = (brandId: string) => `/dashboard/brands/${encodeURIComponent(brandId)}/queue`;

async function brandOf(ctx: PageContext, brandId: string) {
  const { data } = await ctx.deps.services.brands.list(ctx.principal, ctx.workspaceId);
  const brand = data.find((b) => b.id === brandId);
  if (!brand) throw new ServiceError('not_found', 'That brand was not found in this workspace; it may have been deleted.');
  return brand;
}

/** The slot rows of the form; a row left without days and time is no slot (that is how one is removed). */
function rowsOf(ctx: PageContext): SlotRow[] {
  const count = Math.min(Number.parseInt(ctx.form.get('rows'), 10) || 0, MAX_QUEUE_SLOTS + SPARE_ROWS);
  return Array.from({ length: count }, (_, i) => ({ days: ctx.form.all(`slot-${i}-day`), time: ctx.form.get(`slot-${i}-time`).trim() }));
}

/** Errors of the request's `slots[i]…` moved to the form's rows (empty rows were not sent). */
function errorsByRow(errors: FieldErrors, rowOf: number[]): FieldErrors {
  const out: FieldErrors = {};
  for (const [path, message] of Object.entries(errors)) {
    const m = /^slots\[(\d+)\](.*)$/.exec(path);
    const row = m ? rowOf[Number(m[1])] : undefined;
    out[m && row !== undefined ? `row-${row}${m[2]!.startsWith('.days') ? '.days' : m[2]!.startsWith('.time') ? '.time' : ''}` : path] ??= message;
  }
  return out;
}

function slotRow(i: number, row: SlotRow, errors: FieldErrors): SafeHtml {
  const daysError = errors[`row-${i}.days`] ?? errors[`row-${i}`];
  const timeError = errors[`row-${i}.time`];
  return html`<fieldset class="slot${daysError || timeError ? ' invalid' : ''}"${daysError ? html` aria-describedby="slot-${i}-days-error"` : ''}>
  <legend>Slot ${i + 1}</legend>
  <div class="days">
  ${WEEK.map(
    (day) => html`<span class="day-check"><input type="checkbox" id="slot-${i}-${day}" name="slot-${i}-day" value="${day}"${row.days.includes(day) ? html` checked` : ''}><label for="slot-${i}-${day}"><abbr title="${DAY_NAMES[day]}">${DAY_NAMES[day].slice(0, 3)}</abbr><span class="vh"> (slot ${i + 1})</span></label></span>`,
  )}
  </div>
  ${daysError ? html`<p class="field-error" id="slot-${i}-days-error">${daysError}</p>` : ''}
  ${field({
    id: `slot-${i}-time`,
    label: `Time of slot ${i + 1}`,
    error: timeError,
    control: html`<input id="slot-${i}-time" name="slot-${i}-time" type="time" value="${row.time}"${describedBy(`slot-${i}-time`, { error: timeError })}>`,
  })}
</fieldset>`;
}

function render(ctx: PageContext, brand: { id: string; name: string }, queue: Queue, state?: QueueFormState, status = 200): PageResult {
  const errors = state?.errors ?? {};
  const rows = state?.rows ?? [...queue.slots.map((s) => ({ days: [...s.days], time: s.time })), ...Array.from({ length: SPARE_ROWS }, () => ({ days: [], time: '' }))];
  const zone = state?.timeZone ?? queue.time_zone;
  const zoneError = errors.time_zone;
  const unplaced = Object.entries(errors).filter(([path]) => path !== 'time_zone' && !path.startsWith('row-'));
  const next = queue.next_slots.map((s) => html`<tr><td>${s.local_date}</td><td>${s.local_time}</td><td>${isoDate(s.at)}</td></tr>`);
  return {
    title: `Queue of ${brand.name}`,
    active: 'brands',
    status,
    body: html`<h1>Publishing queue of ${brand.name}</h1>
<p><a href="/dashboard/brands">Brands & connections</a></p>
${errorBanner(state?.banner ?? (unplaced.length > 0 ? unplaced.map(([p, m]) => (p === '_' ? m : `${p}: ${m}`)).join(' ') : Object.keys(errors).length > 0 ? 'The queue was not saved: see the messages next to the fields below.' : null))}
<section class="card" aria-labelledby="queue-form-h">
  <h2 id="queue-form-h">Weekly slots</h2>
  <p>“Add to queue” when composing takes the next free slot. Times are local to the brand’s time zone, which is also the zone a scheduled time is read in. A time skipped by a daylight saving change moves to the first minute after the gap; a repeated one is used once.</p>
  <form method="post" action="${queueUrl(brand.id)}">
    ${csrfField(ctx.csrf)}
    <input type="hidden" name="rows" value="${rows.length}">
    ${field({
      id: 'queue-zone',
      label: 'Time zone',
      hint: 'Where the brand’s audience is: its clock decides the slot times.',
      error: zoneError,
      control: zoneInput({ id: 'queue-zone', value: zone, describedBy: describedBy('queue-zone', { hint: true, error: zoneError }) }),
    })}
    <p class="hint">To remove a slot, untick its days and clear its time. Save to get more empty slots.</p>
    ${rows.map((row, i) => slotRow(i, row, errors))}
    <button type="submit" class="primary">Save queue</button>
  </form>
</section>
<section class="card" aria-labelledby="next-slots-h">
  <h2 id="next-slots-h">Next free slots</h2>
  ${table({ id: 'next-slots', caption: `Next free slots of ${brand.name}`, head: ['Local date', `Local time (${queue.time_zone})`, 'Instant'], rows: next, empty: 'No free slot: add slots above.' })}
</section>`,
  };
}

/** A brand's publishing queue (README, Publishing queues): its zone and weekly slots, and the next free slots. */
export function queuePages(pages: PageRouter): void {
  pages.page('/dashboard/brands/:brandId/queue', async (ctx) => {
    const brandId = ctx.params.brandId ?? '';
    const queue = await ctx.deps.services.queue.getQueue(ctx.principal, ctx.workspaceId, brandId);
    return render(ctx, await brandOf(ctx, brandId), queue);
  });

  pages.action('/dashboard/brands/:brandId/queue', async (ctx) => {
    const brandId = ctx.params.brandId ?? '';
    const { services } = ctx.deps;
    const brand = await brandOf(ctx, brandId);
    const rows = rowsOf(ctx);
    const rowOf: number[] = [];
    const slots = rows.flatMap((row, i) => {
      if (row.days.length === 0 && row.time === '') return [];
      rowOf.push(i);
      return [{ days: row.days, time: row.time }];
    });
    const state: QueueFormState = { timeZone: ctx.form.get('time_zone'), rows, errors: {} };
    const again = async (errors: FieldErrors, status: number, banner?: string) =>
      render(ctx, brand, await services.queue.getQueue(ctx.principal, ctx.workspaceId, brandId), { ...state, errors: errorsByRow(errors, rowOf), ...(banner ? { banner } : {}) }, status);
    const checked = check(queueInputSchema, { time_zone: state.timeZone, slots });
    if (!checked.ok) return again(checked.errors, 400);
    try {
      const saved = await services.queue.setQueue(ctx.principal, ctx.workspaceId, brandId, checked.data);
      return { redirect: queueUrl(brandId), flash: `Queue saved: ${postingTimes(saved.slots)} in ${saved.time_zone}.` };
    } catch (err) {
      const fields = fieldErrorsOf(err);
      if (fields) return again(fields, 400);
      if (err instanceof ServiceError && err.code !== 'not_found') return again({}, err.status, explainServiceError(err));
      throw err;
    }
  });
}
