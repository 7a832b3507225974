import { ServiceError } from '../errors.js';
import { canonicalTimeZone, instantOf, localOf, requireTimeZone } from './zoned-time.js';

/** How far ahead a content may be scheduled (README, Scheduling: at most 365 days). */
export const MAX_SCHEDULE_AHEAD_MS = 365 * 86_400_000;

/** A publication time as stored: the instant, the zone it was meant in and the local wall time meant there. */
export interface PublishTime {
  instant: number;
  zone: string;
  /** `YYYY-MM-DDTHH:MM`: the local time asked for (for a nonexistent one, as asked, not the instant after the gap). */
  local: string;
}

/** What a request asks for: publish now, save a draft, publish at a time, or take the brand's next queue slot. */
export type Timing = { kind: 'now' } | { kind: 'draft' } | { kind: 'at'; time: PublishTime } | { kind: 'queue' };

const WITH_OFFSET = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
const LOCAL = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::00)?$/;

function refuse(path: string, message: string): never {
  throw new ServiceError('validation_failed', `${path}: ${message}`, { fields: [{ path, message }] });
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `2026-11-01`, `09:30` → `1 Nov 2026 09:30`: a wall time as a person reads it (no ISO instant, no seconds). */
function wallTimeInWords(date: string, time: string): string {
  return `${Number(date.slice(8, 10))} ${MONTHS[Number(date.slice(5, 7)) - 1]} ${date.slice(0, 4)} ${time}`;
}

/** Minutes east of UTC of an RFC 3339 offset (`Z`, `+01:00`, `-05:30`). */
function offsetMinutes(offset: string): number {
  return offset.toUpperCase() === 'Z' ? 0 : (offset.startsWith('-') ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
}

/** An instant's wall time at a fixed offset. */
function atOffset(instant: number, minutes: number): { date: string; time: string } {
  const wall = new Date(instant + minutes * 60_000).toISOString();
  return { date: wall.slice(0, 10), time: wall.slice(11, 16) };
}

/** Whether an instant's UTC date and time are the ones written (Date.parse rolls 2026-02-30 over on some inputs). */
function sameWallTime(instant: number, offset: string, date: string, hh: string, mm: string): boolean {
  const wall = atOffset(instant, offsetMinutes(offset));
  return wall.date === date && wall.time === `${hh}:${mm}`;
}

/**
 * Reads `publish_at` as the contract allows: an RFC 3339 date-time with an offset names the instant; a local
 * date-time without one (`2026-11-24T09:00`) is a wall time in `zone`, resolved with the zone's rules (a time in a
 * spring-forward gap → the first instant after it; a repeated one → its first occurrence). The time must be in
 * the future and at most 365 days ahead of `now`.
 * @throws ServiceError validation_failed naming `publish_at` or `time_zone`.
 */
export function resolvePublishAt(text: string, zone: string, now: number, path = 'publish_at'): PublishTime {
  requireTimeZone(zone);
  const canonical = canonicalTimeZone(zone);
  let instant: number;
  let local: string;
  // The refusal of a past time speaks in the clock the caller wrote in: the zone's, or the offset's.
  let asked: string;
  let nowThere: string;
  const withOffset = WITH_OFFSET.exec(text);
  const plain = withOffset ? null : LOCAL.exec(text);
  if (withOffset) {
    instant = Date.parse(text);
    const [, date, hh, mm, , offset] = withOffset;
    if (!Number.isFinite(instant) || !sameWallTime(instant, offset!, date!, hh!, mm!)) refuse(path, `${JSON.stringify(text)} is not a valid date-time`);
    const l = localOf(instant, canonical);
    local = `${l.date}T${l.time}`;
    const minutes = offsetMinutes(offset!);
    const where = minutes === 0 ? 'UTC' : `UTC${offset}`;
    const then = atOffset(instant, minutes);
    const current = atOffset(now, minutes);
    asked = `${wallTimeInWords(then.date, then.time)} ${where}`;
    nowThere = `${wallTimeInWords(current.date, current.time)} ${where}`;
  } else if (plain) {
    // The date and time are parts of this one field: an impossible one (24:00, 02-30, 09:60) is refused under it.
    instant = instantOf(plain[1]!, plain[2]!, canonical, path);
    local = `${plain[1]}T${plain[2]}`;
    const current = localOf(now, canonical);
    asked = `${wallTimeInWords(plain[1]!, plain[2]!)} in ${canonical}`;
    nowThere = wallTimeInWords(current.date, current.time);
  } else {
    refuse(path, `expected an RFC 3339 date-time with an offset (2026-11-24T09:00:00-05:00) or a local one to read in time_zone (2026-11-24T09:00), got ${JSON.stringify(text)}`);
  }
  if (instant <= now) refuse(path, `must be in the future (it is ${asked}; now it is ${nowThere})`);
  if (instant > now + MAX_SCHEDULE_AHEAD_MS) refuse(path, 'must be at most 365 days ahead');
  return { instant, zone: canonical, local };
}

/** The local wall time of a queue slot in its zone, as stored with the content that takes it. */
export function slotTime(instant: number, zone: string): PublishTime {
  const l = localOf(instant, zone);
  return { instant, zone, local: `${l.date}T${l.time}` };
}

/**
 * The timing a request asks for. `defaultZone` reads a local `publish_at` when the request names no zone (the
 * brand queue's zone, else UTC).
 */
export function timingOf(
  input: { publish_at?: string | undefined; time_zone?: string | undefined; queue?: boolean | undefined; draft?: boolean | undefined },
  defaultZone: string,
  now: number,
): Timing {
  if (input.draft === true) return { kind: 'draft' };
  if (input.queue === true) return { kind: 'queue' };
  if (input.publish_at !== undefined) return { kind: 'at', time: resolvePublishAt(input.publish_at, input.time_zone ?? defaultZone, now) };
  return { kind: 'now' };
}
