import type { Kysely } from 'kysely';
import { findContent } from '../../../db/repositories/contents.repo.js';
import type { Database } from '../../../db/schema.js';
import { seesBrand } from '../permissions/authorize.js';
import type { Principal } from '../principal.js';
import { contentNotFound } from './content-errors.js';

/**
 * Refuses, as not found, a content of a brand the credential is not limited to: a member of brand A learns nothing
 * of brand B's contents, exactly as of another workspace's. A content never changes brand, so reading it before a
 * conditional change cannot be overtaken. Credentials over every brand skip the read.
 * @throws ServiceError `not_found`.
 */
export async function assertSeesContent(db: Kysely<Database>, principal: Principal, workspaceId: string, contentId: string): Promise<void> {
  if (principal.brandIds === null) return;
  const row = await findContent(db, workspaceId, contentId);
  if (row && !seesBrand(principal, row.brandId)) throw contentNotFound(contentId);
}
