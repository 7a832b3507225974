import { ServiceError } from '../errors.js';

/**
 * Local wall time ↔ instant in an IANA time zone, with the zone's real rules (daylight saving, historical changes)
 * taken from the platform's `Intl.DateTimeFormat` (the ICU time zone database shipped with Node). Never a fixed
 * offset: every offset is read for the instant it applies to. Pure: no clock, no I/O.
 *
 * Rules (README, Scheduling, "Time zones"): a local time that does not exist (spring forward) maps to the first
 * instant after the gap; a local time that occurs twice (fall back) maps to its first occurrence.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const TIME_RE = /^([01]\d|2[0-3]):([0-5]\d)$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A local date and time in a zone, with the zone's offset from UTC at that instant. */
export interface LocalTime {
  /** `YYYY-MM-DD`, the local calendar date. */
  date: string;
  /** `HH:MM`, the local wall-clock time (seconds dropped). */
  time: string;
  /** The zone's offset from UTC at the instant, `+HH:MM` or `-HH:MM` (RFC 3339 time-offset). */
  offset: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat | undefined {
  let formatter = formatters.get(zone);
  if (formatter) return formatter;
  // Offsets such as "+05:00" are not IANA zones; newer ICU versions accept them, the contract does not.
  if (/^[+-]/.test(zone)) return undefined;
  try {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
  } catch {
    return undefined;
  }
  formatters.set(zone, formatter);
  return formatter;
}

function refuse(path: string, message: string): never {
  throw new ServiceError('validation_failed', `${path}: ${message}`, { fields: [{ path, message }] });
}

/** Whether `zone` is an IANA time zone name the platform knows (case as the caller wrote it). */
export function isTimeZone(zone: string): boolean {
  return formatterFor(zone) !== undefined;
}

/**
 * Names the platform's ICU still gives (CLDR keeps its first identifiers) although the IANA database renamed the
 * place since: `Intl` resolves `Asia/Kolkata` to `Asia/Calcutta`. The same place under today's IANA name.
 */
const RENAMED_ZONES: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Coral_Harbour': 'America/Atikokan',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Godthab': 'America/Nuuk',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
};

/**
 * The zone's canonical spelling under its current IANA name (`america/new_york` → `America/New_York`,
 * `Asia/Calcutta` → `Asia/Kolkata`), for storage.
 * @throws ServiceError validation_failed (field `time_zone`) when the zone is unknown.
 */
export function canonicalTimeZone(zone: string): string {
  const resolved = requireFormatter(zone).resolvedOptions().timeZone;
  return RENAMED_ZONES[resolved] ?? resolved;
}

/** Every zone to offer a person, by its current IANA name, UTC first, then in alphabetical order. */
export const TIME_ZONE_NAMES: readonly string[] = [
  'UTC',
  ...Intl.supportedValuesOf('timeZone')
    .filter((z) => z !== 'UTC')
    .map((z) => RENAMED_ZONES[z] ?? z)
    .sort(),
];

/**
 * Checks an IANA time zone name.
 * @throws ServiceError validation_failed (field `path`, default `time_zone`) when the zone is unknown.
 */
export function requireTimeZone(zone: string, path = 'time_zone'): void {
  requireFormatter(zone, path);
}

function requireFormatter(zone: string, path = 'time_zone'): Intl.DateTimeFormat {
  const formatter = formatterFor(zone);
  if (!formatter) refuse(path, `unknown time zone ${JSON.stringify(zone)}; use an IANA name such as "Europe/Berlin"`);
  return formatter;
}

/**
 * Parses `HH:MM` (00:00–23:59) into minutes after midnight.
 * @throws ServiceError validation_failed (field `path`) when the time is malformed.
 */
export function parseLocalTime(time: string, path = 'time'): number {
  const match = TIME_RE.exec(time);
  if (!match) refuse(path, `expected a local time HH:MM between 00:00 and 23:59, got ${JSON.stringify(time)}`);
  return Number(match[1]) * 60 + Number(match[2]);
}

/** Parses `YYYY-MM-DD` (a real calendar date) into the epoch ms of that date's midnight read as UTC. */
function parseLocalDate(date: string, path = 'date'): number {
  const match = DATE_RE.exec(date);
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : NaN;
  // Date.UTC rolls 2026-02-30 over to March: a round trip catches impossible dates. Years 0–99 are remapped by
  // Date.UTC, so the range starts at 1000.
  if (!match || Number(match[1]) < 1000 || new Date(ms).toISOString().slice(0, 10) !== date) {
    refuse(path, `expected a calendar date YYYY-MM-DD, got ${JSON.stringify(date)}`);
  }
  return ms;
}

/** The local wall time of `instant` in the zone, read as if it were UTC (epoch ms, whole seconds). */
function wallClockMs(formatter: Intl.DateTimeFormat, instant: number): number {
  const parts: Record<string, number> = {};
  for (const part of formatter.formatToParts(instant)) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  return year < 100 ? new Date(wall).setUTCFullYear(year) : wall;
}

/** The zone's offset from UTC at `instant`, in ms (local = instant + offset). */
function offsetAt(formatter: Intl.DateTimeFormat, instant: number): number {
  const whole = Math.floor(instant / 1000) * 1000;
  return wallClockMs(formatter, whole) - whole;
}

/**
 * The instant (epoch ms) at which the local date and time occur in the zone.
 * - A local time skipped by a forward shift (02:30 on 2026-03-08 in America/New_York) gives the first instant after
 *   the gap (03:00 local, 07:00Z), not the naive shifted time (03:30).
 * - A local time that occurs twice (01:30 on 2026-11-01 in America/New_York) gives the first occurrence (05:30Z).
 * @param path the input field the date and time were read from, named by a refusal of either; without it the
 *   refusal names `date` or `time` (a queue slot's own fields).
 * @throws ServiceError validation_failed when the zone is unknown (`time_zone`), the date is not a calendar date
 *   (`path`, else `date`) or the time is not HH:MM between 00:00 and 23:59 (`path`, else `time`).
 */
export function instantOf(localDate: string, localTime: string, zone: string, path?: string): number {
  const formatter = requireFormatter(zone);
  const wall = parseLocalDate(localDate, path) + parseLocalTime(localTime, path) * MINUTE_MS;
  // Every offset that could apply: the zone's offsets a day either side cover any single transition near the wall
  // time (real offsets are within ±14 h, transitions at least weeks apart).
  const before = offsetAt(formatter, wall - DAY_MS);
  const after = offsetAt(formatter, wall + DAY_MS);
  const candidates = [before, offsetAt(formatter, wall), after]
    .map((offset) => wall - offset)
    .filter((instant) => offsetAt(formatter, instant) === wall - instant);
  if (candidates.length > 0) return Math.min(...candidates); // fall back: the first occurrence
  // Spring forward: no instant shows this wall time. The gap starts at the transition, the first instant whose
  // offset is no longer `before`; it lies after wall - DAY_MS (still `before`) and by wall - before (already not).
  let lo = Math.floor((wall - DAY_MS) / 1000);
  let hi = Math.ceil((wall - before) / 1000);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(formatter, mid * 1000) === before) lo = mid;
    else hi = mid;
  }
  return hi * 1000;
}

function formatOffset(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const minutes = Math.round(Math.abs(offsetMs) / MINUTE_MS);
  return `${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/**
 * The local date, time (HH:MM) and UTC offset of `instant` in the zone, for rendering an instant as a local time
 * with its offset (`2026-03-08` `03:00` `-04:00`).
 * @throws ServiceError validation_failed (`time_zone`) when the zone is unknown.
 */
export function localOf(instant: number, zone: string): LocalTime {
  const formatter = requireFormatter(zone);
  const offset = offsetAt(formatter, instant);
  const iso = new Date(Math.floor(instant / 1000) * 1000 + offset).toISOString();
  return { date: iso.slice(0, 10), time: iso.slice(11, 16), offset: formatOffset(offset) };
}

/** Adds `days` calendar days to a `YYYY-MM-DD` date. */
export function addDays(localDate: string, days: number): string {
  return new Date(parseLocalDate(localDate) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The weekday of a `YYYY-MM-DD` date, 0 = Sunday … 6 = Saturday (the calendar's, independent of any zone). */
export function weekdayOf(localDate: string): number {
  return new Date(parseLocalDate(localDate)).getUTCDay();
}
