import { ServiceError } from '../errors.js';
import { CYCLE_METER } from '../meters/plans.js';
import { timingOf } from '../scheduling/publish-time.js';
import { brandNotFound } from '../brands/brands.service.js';
import { seesBrand } from '../permissions/authorize.js';
import type { Principal } from '../principal.js';
import { PAYMENT_MODE } from '../wallet/wallet.schema.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { planContent } from './content-plan.js';
import type { CreateContentInput, Preview } from './contents.schema.js';
import { fieldsOf } from './fields.js';
import { type ContentsDeps, zoneOf } from './steps.js';

/** The dry run of a creation: `preview`. */
export function contentPreview(deps: ContentsDeps) {
  const { db, clock, meters } = deps;
  return {
    /**
     * Dry run: every check of `create` and the meter consumption it would need, creating nothing.
     * @throws the same errors as `create`, including `limit_reached` when a meter would not suffice.
     */
    async preview(principal: Principal, workspaceId: string, input: CreateContentInput): Promise<Preview> {
      assertWorkspaceAccess(principal, workspaceId, 'contents.draft');
      if (!seesBrand(principal, input.brand_id)) throw brandNotFound(input.brand_id);
      // The timing is checked as creation checks it (a past publish_at is refused here too).
      timingOf(input, input.publish_at !== undefined && input.time_zone === undefined ? await zoneOf(db, workspaceId, input.brand_id) : 'UTC', clock.now());
      const plan = await planContent(db, workspaceId, fieldsOf(input), deps.probeMedia);
      const usage = await meters.usage(workspaceId);
      const needs = [
        { meter: CYCLE_METER.contentCreations, consumes: 1 },
        { meter: CYCLE_METER.publications, consumes: plan.targets.length },
      ];
      const report = needs.map(({ meter, consumes }) => {
        const m = usage.meters.find((u) => u.meter === meter)!;
        return { meter, used: m.used, consumes, limit: m.limit };
      });
      // Only payment mode `plano` is bound by the plan's ceilings; the other modes pay the excess in credits.
      const over = (input.modo ?? PAYMENT_MODE.plan) === PAYMENT_MODE.plan ? report.find((r) => r.used + r.consumes > r.limit) : undefined;
      if (over) {
        throw new ServiceError('limit_reached', `The plan's ${over.meter} meter is at its ceiling (${over.limit}).`, {
          meter: over.meter,
          limit: over.limit,
          used: over.used,
          resolve: 'upgrade',
        });
      }
      return {
        dry_run: true,
        content_type: plan.contentType,
        jobs: plan.targets.map((t) => ({
          platform_slug: t.platform,
          connection_id: t.connection.id,
          connection_mode: t.connection.mode as 'sandbox' | 'live',
          text: t.text,
          title: t.title,
          thread: t.thread,
        })),
        meters: report,
      };
    },
  };
}
