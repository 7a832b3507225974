import { z } from 'zod';

/**
 * Every duration setting has one form: a whole number with its unit (`250ms`, `30s`, `10m`, `2h`, `7d`). A bare
 * `0` needs none, since zero is the same in every unit. This is the one parser for all of them; the settings'
 * names carry no unit.
 */

const UNITS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export type DurationUnit = keyof typeof UNITS;

const DURATION = /^(\d+)\s*(ms|s|m|h|d)$/;

/** Milliseconds of `text`, or undefined when it is not a duration with a unit. */
export function parseDuration(text: string): number | undefined {
  const value = text.trim();
  if (value === '0') return 0;
  const match = DURATION.exec(value);
  if (match === null) return undefined;
  const ms = Number(match[1]) * UNITS[match[2] as DurationUnit];
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** A duration written from a number of `unit`s: how a bare number under a setting's old name keeps its unit. */
export function durationText(amount: string, unit: DurationUnit): string {
  return /^\d+$/.test(amount.trim()) ? `${amount.trim()}${unit}` : amount;
}

/** Shows milliseconds in the largest unit that divides them, for messages (`90s`, `2h`). */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms !== 0 && ms % UNITS[unit] === 0) return `${ms / UNITS[unit]}${unit}`;
  }
  return `${ms}ms`;
}

interface DurationBounds {
  /** Smallest accepted, in milliseconds (default 1: a duration of nothing is refused unless `min` is 0). */
  min?: number;
  max?: number;
  /** Extra words for the message, e.g. "0 for no limit". */
  note?: string;
}

/** A zod field reading a duration with its unit into milliseconds, `fallback` when unset. */
export function duration(fallback: string, bounds: DurationBounds = {}) {
  const min = bounds.min ?? 1;
  const range = [`${min === 0 ? 'from 0' : `at least ${formatDuration(min)}`}`, bounds.max === undefined ? '' : `at most ${formatDuration(bounds.max)}`]
    .filter((s) => s !== '')
    .join(' and ');
  const message = `must be a duration with a unit such as 250ms, 30s, 10m, 2h or 7d (${range}${bounds.note === undefined ? '' : `; ${bounds.note}`})`;
  return z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined || ms < min || (bounds.max !== undefined && ms > bounds.max)) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return ms;
    });
}

/** A comma-separated list of durations (`5s,30s,2m`) into milliseconds. */
export function durationList(fallback: string) {
  const message = 'must be a comma-separated list of durations with units, such as 5s,30s,2m';
  return z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const items = text.split(',').map(parseDuration);
      if (items.some((ms) => ms === undefined)) {
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      return items as number[];
    });
}
