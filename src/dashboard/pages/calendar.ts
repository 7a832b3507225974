import { contentTitle } from '../names.js';
import type { Content } from '../../core/contents/contents.schema.js';
import { addDays, localOf, weekdayOf } from '../../core/scheduling/zoned-time.js';
import { html, type SafeHtml } from '../../web/html.js';
import { brandZones } from '../brand-zones.js';
import { platformName } from '../explain.js';
import { badge, errorBanner } from '../layout.js';
import type { PageContext, PageRouter } from '../page-router.js';

const CALENDAR = '/dashboard/calendar';
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
/** Pages of the feed read for one view: 2,000 posts in a week or a month is more than a screen shows. */
const MAX_PAGES = 20;

type View = 'week' | 'month';

/** A content placed at its local time in its own zone. */
interface Placed {
  content: Content;
  date: string;
  time: string;
  zone: string;
}

// Dates in words written here rather than by Intl, whose punctuation changes with the ICU version.
const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** `2026-11-23` → `Monday 23 November 2026`. */
function dayInWords(date: string): string {
  return `${DAY_NAMES[weekdayOf(date)]} ${Number(date.slice(8, 10))} ${monthInWords(date)}`;
}

/** `2026-11-23` → `November 2026`. */
function monthInWords(date: string): string {
  return `${MONTH_NAMES[Number(date.slice(5, 7)) - 1]} ${date.slice(0, 4)}`;
}

const utc = (date: string) => new Date(`${date}T00:00:00Z`);

/** A calendar date that exists (2026-02-30 does not). */
function isDate(text: string): boolean {
  return DATE_RE.test(text) && !Number.isNaN(utc(text).getTime()) && utc(text).toISOString().slice(0, 10) === text;
}

/** Monday of the week holding `date`. */
function mondayOf(date: string): string {
  return addDays(date, -((weekdayOf(date) + 6) % 7));
}

function firstOfMonth(date: string): string {
  return `${date.slice(0, 7)}-01`;
}

function shiftMonth(date: string, months: number): string {
  const d = utc(firstOfMonth(date));
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.toISOString().slice(0, 10);
}

/** The days a view shows: a week from Monday, or the whole weeks covering a month. */
function daysOf(view: View, date: string): string[] {
  const start = view === 'week' ? mondayOf(date) : mondayOf(firstOfMonth(date));
  const end = view === 'week' ? addDays(start, 6) : addDays(mondayOf(addDays(shiftMonth(date, 1), -1)), 6);
  const days: string[] = [];
  for (let d = start; d <= end; d = addDays(d, 1)) days.push(d);
  return days;
}

function placed(content: Content, brandZone: string): Placed | null {
  if (content.local_publish_at !== null && content.time_zone !== null) {
    return { content, date: content.local_publish_at.slice(0, 10), time: content.local_publish_at.slice(11, 16), zone: content.time_zone };
  }
  if (content.publish_at === null) return null;
  // Published at once: no zone was typed, so it shows in its brand's zone, the one its scheduled posts are read in.
  const zone = content.time_zone ?? brandZone;
  const local = localOf(Date.parse(content.publish_at), zone);
  return { content, date: local.date, time: local.time, zone };
}

/**
 * The contents whose local date lies in `days`. The feed is asked for the UTC window widened by a day each side
 * (zones are within ±14 h of UTC), then each content is placed by the local date in its own zone.
 */
async function contentsOn(ctx: PageContext, days: string[], zones: Readonly<Record<string, string>>): Promise<{ posts: Placed[]; more: boolean }> {
  const first = days[0]!;
  const last = days[days.length - 1]!;
  const query = { from: `${addDays(first, -1)}T00:00:00Z`, to: `${addDays(last, 2)}T00:00:00Z`, limit: 100 };
  const posts: Placed[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const found = await ctx.deps.services.contents.list(ctx.principal, ctx.workspaceId, { ...query, ...(cursor ? { cursor } : {}) });
    for (const content of found.data) {
      const p = placed(content, zones[content.brand_id] ?? 'UTC');
      if (p && p.date >= first && p.date <= last) posts.push(p);
    }
    if (found.next_cursor === null) return { posts: sortPosts(posts), more: false };
    cursor = found.next_cursor;
  }
  return { posts: sortPosts(posts), more: true };
}

function sortPosts(posts: Placed[]): Placed[] {
  return posts.sort((a, b) => a.date.localeCompare(b.date) || a.time.localeCompare(b.time) || (a.content.publish_at ?? '').localeCompare(b.content.publish_at ?? ''));
}

function postItem(p: Placed, reference: string, brandNames: ReadonlyMap<string, string>): SafeHtml {
  const c = p.content;
  const networks = c.target_platforms.map(platformName).join(', ');
  return html`<li class="post post-${c.status}">
  <a href="/dashboard/contents/${c.content_id}"><time datetime="${c.publish_at ?? ''}">${p.time}</time> <span class="post-text">${contentTitle(c)}</span></a>
  ${badge(c.status)}
  <span class="muted post-meta">${brandNames.get(c.brand_id) ?? ''}${brandNames.has(c.brand_id) ? ' · ' : ''}${networks}${p.zone !== reference ? html` · ${p.zone}` : ''}</span>
</li>`;
}

/**
 * The brands' zones, and the zone the calendar is read in: the one most brands share, UTC without brands. Posts are
 * placed in their own zone whatever this is; "today" is said in every zone.
 */
async function calendarZones(ctx: PageContext): Promise<{ zone: string; zones: Record<string, string>; brandNames: Map<string, string> }> {
  const { data: brands } = await ctx.deps.services.brands.list(ctx.principal, ctx.workspaceId);
  const zones = await brandZones(ctx, brands);
  const counts = new Map<string, number>();
  for (const b of brands) counts.set(zones[b.id] ?? 'UTC', (counts.get(zones[b.id] ?? 'UTC') ?? 0) + 1);
  // Brands made in one instant come in no set order: a tie goes to the zone first in alphabetical order.
  const [zone] = [...counts].sort(([a, m], [b, n]) => n - m || a.localeCompare(b))[0] ?? ['UTC'];
  return { zone, zones, brandNames: new Map(brands.map((b) => [b.id, b.name])) };
}

/** "today is Friday 27 November 2026 in America/New_York and Saturday 28 November 2026 in Europe/Oslo". */
function todayInWords(todays: ReadonlyMap<string, string[]>): string {
  const parts = [...todays].sort(([a], [b]) => a.localeCompare(b)).map(([date, zones]) => `${dayInWords(date)} in ${zones.join(', ')}`);
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)!}`;
}

/** Calendar: scheduled and published contents by week or month, each at its local time with its status. */
export function calendarPages(pages: PageRouter): void {
  pages.page(CALENDAR, async (ctx) => {
    const view: View = ctx.query.view === 'month' ? 'month' : 'week';
    const { zone, zones, brandNames } = await calendarZones(ctx);
    const now = ctx.deps.clock.now();
    const today = localOf(now, zone).date;
    // The date today in each zone a brand uses: on either side of midnight, two days are each someone's today.
    const todays = new Map<string, string[]>();
    for (const z of [zone, ...new Set(Object.values(zones))].filter((z, i, all) => all.indexOf(z) === i)) {
      const d = localOf(now, z).date;
      todays.set(d, [...(todays.get(d) ?? []), z]);
    }
    const asked = ctx.query.date;
    const badDate = asked !== undefined && asked !== '' && !isDate(asked);
    const date = asked !== undefined && isDate(asked) ? asked : today;
    const days = daysOf(view, date);
    const { posts, more } = await contentsOn(ctx, days, zones);
    const link = (v: View, d: string) => `${CALENDAR}?${new URLSearchParams({ view: v, date: d })}`;
    const prev = view === 'week' ? addDays(date, -7) : shiftMonth(date, -1);
    const next = view === 'week' ? addDays(date, 7) : shiftMonth(date, 1);
    const title =
      view === 'week' ? `Week of ${dayInWords(days[0]!)}` : monthInWords(date);

    const dayBlock = (day: string) => {
      const here = posts.filter((p) => p.date === day);
      const outside = view === 'month' && day.slice(0, 7) !== date.slice(0, 7);
      const name = view === 'week' ? html`<h3 id="day-${day}">${dayInWords(day)}</h3>` : html`<h3 id="day-${day}"><span aria-hidden="true">${Number(day.slice(8))}</span><span class="vh">${dayInWords(day)}</span></h3>`;
      return html`<li class="day${outside ? ' outside' : ''}${todays.has(day) ? ' today' : ''}"${day === today ? html` aria-current="date"` : ''}>
  ${name}
  ${here.length > 0 ? html`<ul class="posts">${here.map((p) => postItem(p, zone, brandNames))}</ul>` : view === 'week' ? html`<p class="empty">No posts.</p>` : ''}
</li>`;
    };

    return {
      title: 'Calendar',
      active: 'calendar',
      status: badDate ? 400 : 200,
      body: html`<h1>Calendar</h1>
${errorBanner(badDate ? `“${asked}” is not a date (YYYY-MM-DD): showing the ${view} of today instead.` : null)}
<nav class="calendar-nav card" aria-label="Calendar">
  <p class="actions">
    <a class="button" href="${link(view, prev)}">Previous ${view}</a>
    <a class="button" href="${link(view, today)}">Today</a>
    <a class="button" href="${link(view, next)}">Next ${view}</a>
  </p>
  <p class="actions">View:
    <a href="${link('week', date)}"${view === 'week' ? html` aria-current="page"` : ''}>Week</a>
    <a href="${link('month', date)}"${view === 'month' ? html` aria-current="page"` : ''}>Month</a>
    · <a href="/dashboard/drafts">Drafts</a> · <a href="/dashboard/compose">Compose a post</a>
  </p>
</nav>
<section class="card" aria-labelledby="range-h">
  <h2 id="range-h">${title}</h2>
  <p class="muted">Each post is shown at its local time in its own time zone${zone === 'UTC' ? '' : html` (named when it is not ${zone})`}; today is ${todayInWords(todays)}. Drafts have no time: they are on the Drafts page.</p>
  ${more ? html`<p class="warn">More posts fall in this ${view} than the calendar shows; the earliest are listed.</p>` : ''}
  ${
    view === 'week'
      ? html`<ol class="calendar week">${days.map(dayBlock)}</ol>`
      : html`<div class="weekdays" aria-hidden="true">${days.slice(0, 7).map((d) => html`<span>${DAY_NAMES[weekdayOf(d)]!.slice(0, 3)}</span>`)}</div>
<ol class="calendar month">${days.map(dayBlock)}</ol>`
  }
  <p class="muted" id="calendar-count">${posts.length} post${posts.length === 1 ? '' : 's'} in this ${view}.</p>
</section>`,
    };
  });
}
