import { randomUUID } from 'node:crypto';
import { allows } from '../../core/permissions/authorize.js';
import { type Content, updateContentInputSchema } from '../../core/contents/contents.schema.js';
import { ServiceError } from '../../core/errors.js';
import { IDEMPOTENCY_KEY_RULE, idempotencyKeySchema } from '../../core/idempotency/idempotency.schema.js';
import { explainServiceError } from '../explain.js';
import { check, type FieldErrors, fieldErrorsOf, optional } from '../forms.js';
import { html, type SafeHtml } from '../../web/html.js';
import { actionButton, csrfField, describedBy, errorBanner, field } from '../layout.js';
import type { PageContext, PageResult, PageRouter } from '../page-router.js';
import { localInWords, localPublishAt, type When, whenErrorOf, whenFieldset, whenOf, whenPrecheck, type WhenValues } from '../when-field.js';
import { PLATFORMS } from '../../vocabulary/platforms.js';
import {
  type ContentFieldsState,
  contentFieldsOf,
  contentFieldsPatch,
  contentFieldsSection,
  type EditChoices,
  isContentFieldPath,
  storedContentFields,
} from './content-edit.js';

/** Statuses in which a content can still be edited, canceled or published now (README, Scheduling). */
export const WAITING_STATUSES: readonly Content['status'][] = ['draft', 'scheduled'];

/** Where a list's action may send the person back to; anything else goes to the content itself. */
const RETURN_PAGES = new Set(['/dashboard/drafts']);

/** The edit form as sent, with what was refused, for showing it again. */
export interface EditState {
  text: string;
  title: string;
  /** Type, networks, media and per-network texts. */
  fields: ContentFieldsState;
  when: WhenValues;
  errors: FieldErrors;
}

/** What stopped an action on the content page: a banner and, for the edit form, its values and field errors. */
export interface ContentFailure {
  message?: string | undefined;
  status: number;
  edit?: EditState;
}

export type RenderContent = (ctx: PageContext, contentId: string, failure?: ContentFailure) => Promise<PageResult>;

const lines = (s: string) => s.replace(/\r\n?/g, '\n');

function storedWhen(content: Content): WhenValues {
  const when: When = content.status === 'draft' ? 'draft' : content.queued ? 'queue' : 'schedule';
  const local = content.local_publish_at ?? '';
  return { when, date: local.slice(0, 10), time: local.slice(11, 16) };
}

/**
 * The change an edit form asks for. Timing is sent only when it changes: a queued content keeps its slot and a
 * scheduled one its time unless the person picked something else.
 */
function patchOf(content: Content, state: EditState): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...contentFieldsPatch(content, state.fields) };
  // The shared text is sent only when it changed, so the answer's kept_overrides speaks of this edit alone.
  if ((optional(state.text) ?? null) !== content.text) patch.text = optional(state.text) ?? null;
  if ((optional(state.title) ?? null) !== content.title) patch.title = optional(state.title) ?? null;
  const { when } = state;
  if (when.when === 'schedule') {
    const at = localPublishAt(when);
    if (content.status === 'draft' || content.queued || at !== content.local_publish_at) patch.publish_at = at;
  } else if (when.when === 'queue' && !content.queued) patch.queue = true;
  else if (when.when === 'draft' && content.status !== 'draft') patch.draft = true;
  return patch;
}

/** Field errors a refusal names in `fields` (validation_failed, caption_too_long, media_too_large), else none. */
function placedErrors(err: ServiceError): FieldErrors | null {
  const fields = fieldErrorsOf(err);
  if (fields) return fields;
  const named: unknown = err.extra.fields;
  if (!Array.isArray(named)) return null;
  const errors: FieldErrors = {};
  for (const f of named as { path?: unknown }[]) if (typeof f.path === 'string') errors[f.path] ??= err.message;
  return Object.keys(errors).length > 0 ? errors : null;
}

/** Why a change was refused, in words: a content that moved on is named by its new status. */
function refusal(err: ServiceError): string {
  if (err.code === 'content_not_editable') return `This content can no longer be changed: it is ${String(err.extra.status ?? 'no longer waiting')}. Nothing was changed.`;
  return explainServiceError(err);
}

function keyOf(ctx: PageContext): string | undefined {
  const key = optional(ctx.form.get('idempotency_key'));
  if (key !== undefined && !idempotencyKeySchema.safeParse(key).success) throw new ServiceError('validation_failed', `idempotency_key: it ${IDEMPOTENCY_KEY_RULE}`);
  return key;
}

/** The edit form, Publish now and Cancel of a draft or scheduled content; `zone` is where a new time is read. */
export function scheduleSection(ctx: PageContext, content: Content, zone: string, choices: EditChoices, edit: EditState | undefined): SafeHtml {
  // A role that can neither edit nor publish sees the content only; one that drafts but cannot publish has no buttons to.
  if (!allows(ctx.principal, 'contents.draft', content.brand_id)) return html``;
  const publishes = allows(ctx.principal, 'contents.publish', content.brand_id);
  const values: EditState = edit ?? { text: content.text ?? '', title: content.title ?? '', fields: storedContentFields(content), when: storedWhen(content), errors: {} };
  const errors = values.errors;
  const textError = errors.text;
  const titleError = errors.title;
  const unplaced = Object.entries(errors).filter(([path]) => !['text', 'title', 'publish_at', 'time_zone', 'queue', 'draft'].includes(path) && !isContentFieldPath(path));
  const id = content.content_id;
  const networks = content.target_platforms.length;
  return html`<section class="card" aria-labelledby="edit-h">
  <h2 id="edit-h">Edit, reschedule or cancel</h2>
  <p>This content is ${content.status === 'draft' ? 'a draft: nothing is published until you schedule or publish it' : `scheduled for ${localInWords(content.local_publish_at, content.time_zone)}`}. Changes are checked again as when it was composed; nothing is counted on your plan until it publishes.</p>
  ${unplaced.length > 0 ? errorBanner('The change was refused.', html`<ul>${unplaced.map(([path, m]) => html`<li>${path === '_' ? m : `${path}: ${m}`}</li>`)}</ul>`) : ''}
  <form method="post" action="/dashboard/contents/${id}/edit">
    ${csrfField(ctx.csrf)}
    <input type="hidden" name="idempotency_key" value="${randomUUID()}">
    ${field({
      id: 'edit-text',
      label: 'Text',
      hint: 'Shared by every network without its own text (see Text per network below).',
      error: textError,
      control: html`<textarea id="edit-text" name="text" rows="6" maxlength="100000"${describedBy('edit-text', { hint: true, error: textError })}>
${values.text}</textarea>`,
    })}
    ${
      content.title !== null || content.target_platforms.includes('youtube')
        ? field({
            id: 'edit-title',
            label: 'Title',
            error: titleError,
            control: html`<input id="edit-title" name="title" type="text" maxlength="1000" value="${values.title}"${describedBy('edit-title', { error: titleError })}>`,
          })
        : ''
    }
    ${contentFieldsSection(content, values.fields, choices, errors)}
    ${whenFieldset({
      choices: ['schedule', 'queue', 'draft'],
      values: values.when,
      zone,
      zoneNote: content.time_zone ? '(the zone it was scheduled in).' : '(the brand’s: its queue’s zone, else UTC).',
      error: whenErrorOf(errors),
      hints: {
        queue: content.queued ? 'It holds a queue slot; keeping this keeps the slot.' : 'At the brand’s next free queue slot.',
        draft: content.status === 'draft' ? 'Stays a draft.' : 'Back to the drafts: its time and queue slot are let go.',
      },
    })}
    <button type="submit" class="primary">Save changes</button>
  </form>
  ${
    !publishes
      ? ''
      : html`<div class="actions">
    ${actionButton({
      action: `/dashboard/contents/${id}/publish`,
      csrf: ctx.csrf,
      label: 'Publish now',
      fields: { idempotency_key: randomUUID() },
      confirm: `Publish this now on ${networks} network${networks === 1 ? '' : 's'}? It counts on your plan now.`,
    })}
    ${actionButton({
      action: `/dashboard/contents/${id}/cancel`,
      csrf: ctx.csrf,
      label: 'Cancel post',
      danger: true,
      fields: { idempotency_key: randomUUID() },
      confirm: 'Cancel this post? It will never publish, and its queue slot is freed.',
    })}
  </div>`
  }
</section>`;
}

/** Edit, cancel and publish now, each one core call; refusals come back on the content page. */
export function contentScheduleActions(pages: PageRouter, renderContent: RenderContent, contentIdOf: (ctx: PageContext) => string): void {
  const back = (ctx: PageContext, contentId: string) => {
    const next = ctx.form.get('next');
    return RETURN_PAGES.has(next) ? next : `/dashboard/contents/${contentId}`;
  };

  pages.action('/dashboard/contents/:contentId/edit', async (ctx) => {
    const contentId = contentIdOf(ctx);
    const { services } = ctx.deps;
    const content = await services.contents.get(ctx.principal, ctx.workspaceId, contentId);
    const state: EditState = {
      text: lines(ctx.form.get('text')),
      title: ctx.form.get('title'),
      fields: contentFieldsOf(ctx.form) ?? storedContentFields(content),
      when: whenOf(ctx.form, storedWhen(content).when),
      errors: {},
    };
    const early = whenPrecheck(state.when);
    const patch = patchOf(content, state);
    if (Object.keys(patch).length === 0 && Object.keys(early).length === 0) return { redirect: `/dashboard/contents/${contentId}`, flash: 'Nothing was changed.' };
    const checked = check(updateContentInputSchema, patch);
    if (!checked.ok || Object.keys(early).length > 0) {
      return renderContent(ctx, contentId, { status: 400, edit: { ...state, errors: { ...(checked.ok ? {} : checked.errors), ...early } } });
    }
    try {
      const result = await services.contents.update(ctx.principal, ctx.workspaceId, contentId, checked.data, keyOf(ctx));
      if (!result.outcome.ok) throw result.outcome.error;
      const saved = result.outcome.value;
      const where = saved.status === 'draft' ? 'It is a draft.' : `${saved.queued ? 'In the queue' : 'Scheduled'} for ${localInWords(saved.local_publish_at, saved.time_zone)}.`;
      const kept = saved.kept_overrides.map((k) => `${PLATFORMS[k.platform_slug].name} keeps its own ${k.fields.join(' and ')}.`).join(' ');
      return { redirect: `/dashboard/contents/${contentId}`, flash: `Changes saved. ${where}${kept === '' ? '' : ` ${kept} Change it under Text per network.`}` };
    } catch (err) {
      if (!(err instanceof ServiceError) || err.code === 'not_found') throw err;
      const errors = placedErrors(err);
      if (errors) return renderContent(ctx, contentId, { status: err.status, edit: { ...state, errors } });
      return renderContent(ctx, contentId, { status: err.status, message: refusal(err) });
    }
  });

  pages.action('/dashboard/contents/:contentId/cancel', async (ctx) => {
    const contentId = contentIdOf(ctx);
    try {
      const result = await ctx.deps.services.contents.cancel(ctx.principal, ctx.workspaceId, contentId, keyOf(ctx));
      if (!result.outcome.ok) throw result.outcome.error;
      return { redirect: back(ctx, contentId), flash: 'Canceled: it will not publish.' };
    } catch (err) {
      if (!(err instanceof ServiceError) || err.code === 'not_found') throw err;
      return renderContent(ctx, contentId, { status: err.status, message: refusal(err) });
    }
  });

  pages.action('/dashboard/contents/:contentId/publish', async (ctx) => {
    const contentId = contentIdOf(ctx);
    try {
      const result = await ctx.deps.services.contents.publishNow(ctx.principal, ctx.workspaceId, contentId, keyOf(ctx));
      if (!result.outcome.ok) throw result.outcome.error;
      const n = result.outcome.value.jobs.length;
      return { redirect: `/dashboard/contents/${contentId}`, flash: `Publishing now on ${n} network${n === 1 ? '' : 's'}.` };
    } catch (err) {
      if (!(err instanceof ServiceError) || err.code === 'not_found') throw err;
      return renderContent(ctx, contentId, { status: err.status, message: refusal(err) });
    }
  });
}
