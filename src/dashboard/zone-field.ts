import { localOf, TIME_ZONE_NAMES } from '../core/scheduling/zoned-time.js';
import { html, type SafeHtml } from '../web/html.js';

/**
 * A time zone input: typed with suggestions from a `<datalist>` of the current IANA names, so a person finds
 * "Kolkata" by typing it (no script needed) instead of scrolling 400 options. `browserZone`: the page's script
 * puts the browser's own zone in it while the person has not changed the value.
 */
export function zoneInput(options: { id: string; value: string; describedBy: SafeHtml | string; browserZone?: boolean }): SafeHtml {
  const listId = `${options.id}-list`;
  return html`<input id="${options.id}" name="time_zone" type="text" list="${listId}" required autocomplete="off" spellcheck="false" value="${options.value}"${options.browserZone ? html` data-browser-zone` : ''}${options.describedBy}>
<datalist id="${listId}">${TIME_ZONE_NAMES.map((z) => html`<option value="${z}"></option>`)}</datalist>`;
}

/**
 * An instant as a wall time in `zone`, the zone named (`2026-11-27 20:50 America/New_York`): what a person of the
 * brand reads, with the exact instant kept in `datetime`. A dash when there is no instant.
 */
export function timeIn(iso: string | null | undefined, zone: string): SafeHtml {
  if (!iso) return html`—`;
  const local = localOf(Date.parse(iso), zone);
  return html`<time datetime="${iso}">${local.date} ${local.time} ${zone}</time>`;
}
