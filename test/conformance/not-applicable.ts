import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A run of the suite: one wire era, or the extension scenarios that belong to neither. */
export const ERAS = ['2025-11-25', '2026-07-28', 'extension'] as const;
export type Era = (typeof ERAS)[number];

/** What the suite reports for a scenario (or one check): a failing check, only successes, or neither. */
export type Outcome = 'passes' | 'fails' | 'skips';
const OUTCOMES: readonly string[] = ['passes', 'fails', 'skips'];

export interface NotApplicable {
  scenario: string;
  /** Set when a single check of an otherwise applicable scenario does not apply. */
  check?: string;
  eras: Era[];
  outcome: Outcome;
  reason: string;
}

/** Parses test/conformance/not-applicable.txt (its header comment describes the columns). */
export function readNotApplicable(file = join(dirname(fileURLToPath(import.meta.url)), 'not-applicable.txt')): NotApplicable[] {
  const entries: NotApplicable[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((raw, index) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const [target, eras, outcome, ...reason] = line.split(/\s+/);
      const where = `not-applicable.txt:${index + 1}`;
      const eraList = (eras ?? '').split(',');
      if (!eraList.every((era): era is Era => (ERAS as readonly string[]).includes(era))) throw new Error(`${where}: unknown era in "${eras}"`);
      if (outcome === undefined || !OUTCOMES.includes(outcome)) throw new Error(`${where}: outcome must be one of ${OUTCOMES.join(', ')}`);
      if (reason.length === 0) throw new Error(`${where}: a reason is required`);
      const [scenario, check] = target!.split(':');
      entries.push({ scenario: scenario!, ...(check === undefined ? {} : { check }), eras: eraList, outcome: outcome as Outcome, reason: reason.join(' ') });
    });
  return entries;
}
