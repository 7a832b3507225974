import type { Brand } from '../core/brands/brands.schema.js';
import type { PageContext } from './page-router.js';

/** Each brand's time zone (its queue's, else UTC, as the core reads a local time without a zone). */
export async function brandZones(ctx: Pick<PageContext, 'deps' | 'principal' | 'workspaceId'>, brands: readonly Pick<Brand, 'id'>[]): Promise<Record<string, string>> {
  return ctx.deps.services.queue.timeZones(ctx.principal, ctx.workspaceId, brands.map((b) => b.id));
}
