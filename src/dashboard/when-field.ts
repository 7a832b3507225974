import type { PostedForm } from './page-router.js';
import { html, type SafeHtml } from '../web/html.js';

/** When a post goes out (README, Scheduling): now, at a local date and time, in the brand's queue, or kept as a draft. */
export const WHEN_CHOICES = ['now', 'schedule', 'queue', 'draft'] as const;
export type When = (typeof WHEN_CHOICES)[number];

export const WHEN_LABELS: Record<When, string> = {
  now: 'Publish now',
  schedule: 'Schedule',
  queue: 'Add to queue',
  draft: 'Save draft',
};

/** The field paths of the core's timing refusals, shown inside the When fieldset. */
export const WHEN_PATHS = ['publish_at', 'time_zone', 'queue', 'draft'] as const;

/** What the person chose and typed in the When fieldset. */
export interface WhenValues {
  when: When;
  /** `YYYY-MM-DD` as the date input sends it. */
  date: string;
  /** `HH:MM` as the time input sends it. */
  time: string;
}

export function whenOf(form: PostedForm, fallback: When): WhenValues {
  const chosen = form.get('when');
  return {
    when: (WHEN_CHOICES as readonly string[]).includes(chosen) ? (chosen as When) : fallback,
    date: form.get('publish_date').trim(),
    time: form.get('publish_time').trim(),
  };
}

/**
 * The local wall time the inputs name (`2026-11-24T09:00`), sent without an offset so the core reads it in the
 * brand's (or the content's) zone with the zone's rules; undefined when a part is missing.
 */
export function localPublishAt(values: WhenValues): string | undefined {
  return values.date === '' || values.time === '' ? undefined : `${values.date}T${values.time}`;
}

/** What only the form can say: Schedule chosen with the date or the time left empty. */
export function whenPrecheck(values: WhenValues): Record<string, string> {
  return values.when === 'schedule' && localPublishAt(values) === undefined ? { publish_at: 'Choose a date and a time.' } : {};
}

/** The first of the timing refusals (`publish_at`, `queue` …), in the person's words where the form knows better. */
export function whenErrorOf(errors: Record<string, string> | undefined): string | undefined {
  if (!errors) return undefined;
  for (const path of WHEN_PATHS) {
    const message = errors[path];
    if (message === undefined) continue;
    if (path === 'queue' && /has no queue/.test(message)) return "This brand has no queue yet: set its slots on the brand's queue page, or choose another option.";
    return message;
  }
  return undefined;
}

/** `2026-11-24T09:00` in words: `2026-11-24 09:00 (America/New_York)`. */
export function localInWords(local: string | null, zone: string | null): string {
  if (local === null) return 'no time set';
  return `${local.replace('T', ' ')}${zone ? ` (${zone})` : ''}`;
}

/**
 * The When fieldset: a radio per choice, and date and time inputs read in `zone`. Every control is in the page
 * for a browser without scripts; the script hides the date and time unless Schedule is chosen, and with
 * `submitLabels` names the form's primary button after the choice.
 */
export function whenFieldset(
  options: { choices: readonly When[]; values: WhenValues; zone: string | null; zoneNote: string; error: string | undefined; hints?: Partial<Record<When, string>>; submitLabels?: Record<When, string> },
): SafeHtml {
  const { values, error } = options;
  const describe = `when-hint${error ? ' when-error' : ''}`;
  return html`<fieldset class="field when${error ? ' invalid' : ''}" aria-describedby="${describe}" data-when${options.submitLabels ? html` data-submit-labels="${JSON.stringify(options.submitLabels)}"` : ''}>
  <legend>When</legend>
  <p class="hint" id="when-hint">Dates and times are in the time zone shown, on the clock of that place.</p>
  <div class="choices">
  ${options.choices.map((choice) => {
    const hint = options.hints?.[choice];
    return html`<div class="field check">
    <input type="radio" id="when-${choice}" name="when" value="${choice}"${choice === values.when ? html` checked` : ''}${hint ? html` aria-describedby="when-${choice}-hint"` : ''}>
    <label for="when-${choice}">${WHEN_LABELS[choice]}</label>
    ${hint ? html`<p class="hint" id="when-${choice}-hint">${hint}</p>` : ''}
  </div>`;
  })}
  </div>
  <div class="when-time" data-show-when="schedule">
    <div class="field">
      <label for="publish-date">Date</label>
      <input id="publish-date" name="publish_date" type="date" value="${values.date}" aria-describedby="publish-zone"${error ? html` aria-invalid="true"` : ''}>
    </div>
    <div class="field">
      <label for="publish-time">Time</label>
      <input id="publish-time" name="publish_time" type="time" value="${values.time}" aria-describedby="publish-zone"${error ? html` aria-invalid="true"` : ''}>
    </div>
    <p class="hint zone" id="publish-zone">Time zone: <strong data-zone-name>${options.zone ?? 'the brand’s'}</strong> ${options.zoneNote}</p>
  </div>
  ${error ? html`<p class="field-error" id="when-error">${error}</p>` : ''}
</fieldset>`;
}
