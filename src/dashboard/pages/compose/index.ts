import { type CreatedContent, createContentInputSchema } from '../../../core/contents/contents.schema.js';
import { ServiceError } from '../../../core/errors.js';
import type { UploadedMedia } from '../../../core/media/media.schema.js';
import { check } from '../../forms.js';
import { readForm } from '../../multipart.js';
import { CsrfRefused, PostedForm, type PageContext, type PageRouter } from '../../page-router.js';
import { friendlier } from './errors.js';
import { allRefusals, dryRun } from './refusals.js';
import { type Choices, chosenConnections, COMPOSE, type ComposeValues, emptyValues, MEDIA_TYPES, mediaItemsOf, FORM_LIMITS, formKeyOf, inputOf, precheck, valuesOf } from './form.js';
import { uploadError, uploadOnce } from './uploads.js';
import { render } from './view.js';
import { brandZones } from '../../brand-zones.js';
import { localInWords } from '../../when-field.js';

async function loadChoices(ctx: PageContext): Promise<Choices> {
  const { services } = ctx.deps;
  const [{ data: brands }, { data: connections }] = await Promise.all([services.brands.list(ctx.principal, ctx.workspaceId), services.connections.list(ctx.principal, ctx.workspaceId, {})]);
  const ids = brands.map((b) => b.id);
  const [zones, suggested] = await Promise.all([brandZones(ctx, brands), services.queue.suggestedTimes(ctx.principal, ctx.workspaceId, ids)]);
  return { brands, zones, suggested, usable: connections.filter((c) => c.status !== 'inactive') };
}

/**
 * The pictures the preview can draw, in the order the media go out: our own photo uploads, at their signed
 * address (a public address elsewhere would be refused by the page's image policy, so it stays a frame).
 */
async function previewImages(ctx: PageContext, values: ComposeValues): Promise<(string | null)[]> {
  return Promise.all(
    mediaItemsOf(values).map(async ({ item }) => {
      if (!('media_id' in item)) return null;
      try {
        const media = await ctx.deps.services.media.get(ctx.principal, ctx.workspaceId, item.media_id);
        return media.content_type.startsWith('image/') ? media.url : null;
      } catch (err) {
        if (err instanceof ServiceError) return null;
        throw err;
      }
    }),
  );
}

/** What the person is told after a submit: where the content went and when. */
function createdMessage(created: CreatedContent): string {
  const networks = `${created.jobs.length} network${created.jobs.length === 1 ? '' : 's'}`;
  switch (created.status) {
    case 'draft':
      return 'Saved as a draft: nothing is published until you schedule or publish it.';
    case 'scheduled':
      return `${created.queued ? 'Added to the queue' : 'Scheduled'} for ${localInWords(created.local_publish_at, created.time_zone)} on ${networks}.`;
    default:
      // Said once and left on the page while it refreshes: it must stay true once the networks have answered.
      return `Sent to ${networks}: each one’s progress is below.`;
  }
}

/** Compose (spec 4.3): one form for every network, with preview, uploads and errors next to their fields. */
export function composePages(pages: PageRouter): void {
  pages.page(COMPOSE, async (ctx) => {
    const choices = await loadChoices(ctx);
    // "Use in composer" from the media library: the upload is offered ticked, with a type that takes media.
    const mediaId = ctx.query.media_id?.trim() ?? '';
    if (mediaId === '' || mediaId.length > 100) return render(ctx, choices, null);
    const type = ctx.query.content_type ?? '';
    return render(ctx, choices, { ...emptyValues(choices), mediaIds: [mediaId], contentType: MEDIA_TYPES.includes(type) ? type : 'photo' });
  });

  pages.rawAction(COMPOSE, async (ctx) => {
    // Files of this request so far, in the order they arrive: the order the person chose them in.
    let fileCount = 0;
    const read = await readForm<UploadedMedia>(ctx.req, {
      limits: FORM_LIMITS,
      accept: (first) => first.name === 'csrf' && pages.verifyCsrf(ctx, first.value),
      onFile: (file, fields) => uploadOnce(ctx, file, formKeyOf(fields), fileCount++, fields),
    });
    if (!read.accepted) throw new CsrfRefused();
    const choices = await loadChoices(ctx);
    const values = valuesOf(new PostedForm(read.fields));
    // Before the files: the page sends its key ahead of the file input, so a form refused for its key stored none.
    const formKey = formKeyOf(read.fields);
    if (!formKey.ok) {
      const message = `This form's idempotency key was refused: it ${formKey.rule}. Nothing was published or stored; send the form again from this page, which carries a new key${read.files.length > 0 ? ' (choose the file again)' : ''}.`;
      return render(ctx, choices, values, { banner: { message, wallet: false }, status: 400 });
    }

    let uploadFailure: { message: string; status: number } | null = null;
    for (const file of read.files) {
      if (file.result.status === 'fulfilled') {
        values.mediaIds.push(file.result.value.id);
        continue;
      }
      const failure = uploadError(file.result.reason as unknown, file.truncated);
      if (!failure) throw file.result.reason;
      uploadFailure = failure;
    }
    if (uploadFailure) return render(ctx, choices, values, { errors: { media_file: uploadFailure.message }, status: uploadFailure.status });
    if (read.overLimit) {
      return render(ctx, choices, values, { banner: { message: 'The form was larger than the dashboard accepts. Shorten the text or the thread and try again.', wallet: false }, status: 413 });
    }

    // The form's own check and the schema's, together, so the person sees every such error at once.
    const early = precheck(values);
    const checked = check(createContentInputSchema, inputOf(values, choices));
    const invalid = { ...(checked.ok ? {} : friendlier(checked.errors, values)), ...early };
    if (!checked.ok) return render(ctx, choices, values, { errors: invalid, status: 400 });
    const input = checked.data;
    const { services } = ctx.deps;
    const chosen = chosenConnections(values, choices);
    const connectionOf = (slug: string) => chosen.find((id) => choices.usable.find((c) => c.id === id)?.platform_slug === slug);

    if (Object.keys(early).length > 0) {
      // The form's refusals and the core's (each network dry-run), in one answer; the timing is the form's to judge.
      const untimed = { ...input, publish_at: undefined, time_zone: undefined, queue: undefined, draft: undefined };
      const core = values.brandId === '' ? null : await dryRun(ctx, untimed, connectionOf);
      const coreErrors = core && !core.ok ? core.outcome.errors : {};
      return render(ctx, choices, values, { ...(core && !core.ok ? core.outcome : {}), errors: { ...coreErrors, ...early }, status: 400 });
    }

    if (read.fields.intent?.[0] === 'preview') {
      const run = await dryRun(ctx, input, connectionOf);
      const stored = read.files.filter((f) => f.result.status === 'fulfilled').length;
      return render(ctx, choices, values, run.ok ? { preview: run.preview, previewImages: await previewImages(ctx, values), previewUploads: stored } : run.outcome);
    }

    let result;
    try {
      result = await services.contents.create(ctx.principal, ctx.workspaceId, input, formKey.key);
    } catch (err) {
      if (err instanceof ServiceError) return render(ctx, choices, values, await allRefusals(ctx, input, err, connectionOf));
      throw err;
    }
    if (!result.outcome.ok) return render(ctx, choices, values, await allRefusals(ctx, input, result.outcome.error, connectionOf));
    const created = result.outcome.value;
    const told = createdMessage(created);
    return {
      redirect: `/dashboard/contents/${created.content_id}`,
      flash: result.replayed ? `This form was already sent: here is the content it created. ${told}` : told,
    };
  });
}
