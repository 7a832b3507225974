import { findContentWithJobs, listContents, listContentsByPublishAt } from '../../../db/repositories/contents.repo.js';
import { listJobsForContents } from '../../../db/repositories/jobs.repo.js';
import { decodeCursor, decodeWindowCursor, encodeCursor, encodeWindowCursor } from '../cursor.js';
import { brandScope, seesBrand } from '../permissions/authorize.js';
import type { Principal } from '../principal.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { contentNotFound, invalid } from './content-errors.js';
import type { Content, ContentListQuery } from './contents.schema.js';
import { renderContent } from './render.js';
import type { ContentsDeps } from './steps.js';

/** Reading contents: `get`, `list`. */
export function contentReads(deps: ContentsDeps) {
  const { db, clock } = deps;
  return {
    /** @throws ServiceError `not_found`. */
    async get(principal: Principal, workspaceId: string, contentId: string): Promise<Content> {
      assertWorkspaceAccess(principal, workspaceId, 'contents.read');
      const found = await findContentWithJobs(db, workspaceId, contentId);
      if (!found || !seesBrand(principal, found.content.brandId)) throw contentNotFound(contentId);
      return renderContent(found.content, found.jobs, clock.now());
    },

    /**
     * Newest first, cursor-paginated, filtered by status and creation date; with `from` or `to`, the calendar
     * feed: contents whose publish_at is in the window, earliest first.
     */
    async list(principal: Principal, workspaceId: string, query: ContentListQuery): Promise<{ data: Content[]; next_cursor: string | null }> {
      assertWorkspaceAccess(principal, workspaceId, 'contents.read');
      const brandIds = brandScope(principal);
      const now = clock.now();
      if (query.from !== undefined || query.to !== undefined) {
        const from = query.from === undefined ? undefined : Date.parse(query.from);
        const to = query.to === undefined ? undefined : Date.parse(query.to);
        if (from !== undefined && to !== undefined && to <= from) throw invalid('to', 'must be after from');
        const rows = await listContentsByPublishAt(db, workspaceId, {
          status: query.status,
          brandIds,
          from,
          to,
          after: query.cursor === undefined ? undefined : decodeWindowCursor(query.cursor),
          limit: query.limit + 1,
        });
        const page = rows.slice(0, query.limit);
        const jobs = await listJobsForContents(db, page.map((r) => r.id));
        const last = page[page.length - 1];
        return {
          data: page.map((r) => renderContent(r, jobs.filter((j) => j.contentId === r.id), now)),
          next_cursor: rows.length > query.limit && last ? encodeWindowCursor({ at: last.publishAt ?? 0, id: last.id }) : null,
        };
      }
      const rows = await listContents(db, workspaceId, {
        status: query.status,
        brandIds,
        createdAfter: query.created_after === undefined ? undefined : Date.parse(query.created_after),
        createdBefore: query.created_before === undefined ? undefined : Date.parse(query.created_before),
        after: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
        limit: query.limit + 1,
      });
      const page = rows.slice(0, query.limit);
      const jobs = await listJobsForContents(db, page.map((r) => r.id));
      return {
        data: page.map((r) => renderContent(r, jobs.filter((j) => j.contentId === r.id), now)),
        next_cursor: rows.length > query.limit ? encodeCursor(page[page.length - 1]!) : null,
      };
    },
  };
}
