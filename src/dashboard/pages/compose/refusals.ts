import type { CreateContentInput } from '../../../core/contents/contents.schema.js';
import { ServiceError } from '../../../core/errors.js';
import type { PageContext } from '../../page-router.js';
import { type Outcome, placeError } from './errors.js';

/** `target_platforms[0]` of a one-network request is `target_platforms[i]` of the whole one. */
function remap(path: string, platformIndex: number, connectionIndex: number | null): string {
  if (/^target_platforms\[0\]/.test(path)) return path.replace(/^target_platforms\[0\]/, `target_platforms[${platformIndex}]`);
  if (connectionIndex !== null && /^target_connections\[0\]/.test(path)) return path.replace(/^target_connections\[0\]/, `target_connections[${connectionIndex}]`);
  return path;
}

/** The request narrowed to one network: its connection choice and its override only. */
function forOne(input: CreateContentInput, slug: CreateContentInput['target_platforms'][number], connection: string | undefined): CreateContentInput {
  const override = input.overrides?.[slug];
  return {
    ...input,
    target_connections: undefined,
    overrides: undefined,
    target_platforms: [slug],
    ...(connection !== undefined ? { target_connections: [connection] } : {}),
    ...(override !== undefined ? { overrides: { [slug]: override } } : {}),
  };
}

/**
 * Every refusal of a request in one pass, so a person fixes them all before submitting again. The core stops at its first refusal, so after one,
 * each network is dry-run on its own and their refusals are put together, each at its path in the whole request:
 * a network without a connection, a text too long for Threads and a title too long for YouTube show at once.
 * A refusal no single network causes (the plan's ceiling over all of them) is the first one, as the core said it.
 * Nothing is created, charged or published.
 */
export async function allRefusals(ctx: PageContext, input: CreateContentInput, first: ServiceError, connectionOf: (slug: string) => string | undefined): Promise<Outcome> {
  const firstOutcome = placeError(first, input);
  if (input.target_platforms.length < 2) return firstOutcome;
  const outcomes = await Promise.all(
    input.target_platforms.map(async (slug, i) => {
      const connection = connectionOf(slug);
      const connectionIndex = connection === undefined ? null : (input.target_connections ?? []).indexOf(connection);
      const one = forOne(input, slug, connection);
      try {
        await ctx.deps.services.contents.preview(ctx.principal, ctx.workspaceId, one);
        return null;
      } catch (err) {
        if (!(err instanceof ServiceError)) throw err;
        const placed = placeError(err, one);
        const errors = Object.fromEntries(Object.entries(placed.errors ?? {}).map(([path, message]) => [remap(path, i, connectionIndex === -1 ? null : connectionIndex), message]));
        return { ...placed, errors };
      }
    }),
  );
  const refused = outcomes.filter((o): o is NonNullable<typeof o> => o !== null);
  if (refused.length === 0) return firstOutcome;
  const errors = Object.assign({}, ...refused.map((o) => o.errors));
  const banners = [...new Set(refused.flatMap((o) => (o.banner ? [o.banner.message] : [])))];
  const offered = refused.flatMap((o) => o.offered ?? []);
  const status = refused[0]!.status ?? firstOutcome.status;
  return {
    errors,
    ...(banners.length > 0 ? { banner: { message: banners.join(' '), wallet: refused.some((o) => o.banner?.wallet) } } : {}),
    ...(offered.length > 0 ? { offered } : {}),
    ...(status !== undefined ? { status } : {}),
  };
}

/** The dry run of the whole request: its preview, or every refusal of it (see `allRefusals`). */
export async function dryRun(
  ctx: PageContext,
  input: CreateContentInput,
  connectionOf: (slug: string) => string | undefined,
): Promise<{ ok: true; preview: Awaited<ReturnType<PageContext['deps']['services']['contents']['preview']>> } | { ok: false; outcome: Outcome }> {
  try {
    return { ok: true, preview: await ctx.deps.services.contents.preview(ctx.principal, ctx.workspaceId, input) };
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    return { ok: false, outcome: await allRefusals(ctx, input, err, connectionOf) };
  }
}
