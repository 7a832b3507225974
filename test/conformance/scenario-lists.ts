import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A run of the suite: one wire era, or the extension scenarios that belong to neither. */
export const ERAS = ['2025-11-25', '2026-07-28', 'extension'] as const;
export type Era = (typeof ERAS)[number];

/** What the suite reports for a scenario (or one check): a failing check, only successes, or neither. */
export type Outcome = 'passes' | 'fails' | 'skips';
const OUTCOMES: readonly string[] = ['passes', 'fails', 'skips'];

/** One line of a list: a whole scenario, or a single check of it when `check` is set. */
export interface ListedScenario {
  scenario: string;
  check?: string;
  eras: Era[];
  reason: string;
}

export interface NotApplicable extends ListedScenario {
  outcome: Outcome;
}

const HERE = dirname(fileURLToPath(import.meta.url));

/** Lines of `file` split into columns: `scenario[:check]`, eras, then `columns - 2` more, the last one free text. */
function readList(file: string, columns: number): { entry: ListedScenario; fields: string[]; where: string }[] {
  return readFileSync(join(HERE, file), 'utf8')
    .split('\n')
    .map((raw, index) => ({ line: raw.trim(), where: `${file}:${index + 1}` }))
    .filter(({ line }) => line !== '' && !line.startsWith('#'))
    .map(({ line, where }) => {
      const [target, eras, ...rest] = line.split(/\s+/);
      const eraList = (eras ?? '').split(',');
      if (!eraList.every((era): era is Era => (ERAS as readonly string[]).includes(era))) throw new Error(`${where}: unknown era in "${eras}"`);
      const fields = rest.slice(0, columns - 3);
      const reason = rest.slice(columns - 3).join(' ');
      if (reason === '') throw new Error(`${where}: a reason is required`);
      const [scenario, check] = target!.split(':');
      return { entry: { scenario: scenario!, ...(check === undefined ? {} : { check }), eras: eraList, reason }, fields, where };
    });
}

/** test/conformance/not-applicable.txt: what does not apply to this server, why, and what the suite reports for it. */
export function readNotApplicable(): NotApplicable[] {
  return readList('not-applicable.txt', 4).map(({ entry, fields: [outcome], where }) => {
    if (outcome === undefined || !OUTCOMES.includes(outcome)) throw new Error(`${where}: outcome must be one of ${OUTCOMES.join(', ')}`);
    return { ...entry, outcome: outcome as Outcome };
  });
}

/** test/conformance/known-failures.txt: applicable scenarios or checks that fail, each a bug in the server. */
export function readKnownFailures(): ListedScenario[] {
  return readList('known-failures.txt', 3).map(({ entry }) => entry);
}

/** `scenario` or `scenario:check`, the key under which outcomes are compared. */
export function keyOf(entry: ListedScenario): string {
  return entry.check === undefined ? entry.scenario : `${entry.scenario}:${entry.check}`;
}
