import { allows } from '../core/permissions/authorize.js';
import type { Permission } from '../core/permissions/roles.js';
import type { Access } from '../core/principal.js';
import { SECTIONS, type SectionId } from './layout.js';

/**
 * What each dashboard section needs to be of any use, so the navigation leaves out what the role cannot open. The
 * decision is `allows`, the core's; a page opened anyway is refused by the core's own check, politely.
 */
const SECTION_PERMISSIONS: Record<SectionId, Permission> = {
  overview: 'workspace.read',
  compose: 'contents.draft',
  calendar: 'contents.read',
  drafts: 'contents.read',
  contents: 'contents.read',
  media: 'media.read',
  brands: 'brands.read',
  webhooks: 'webhooks.read',
  'api-keys': 'api_keys.manage',
  members: 'members.read',
  'connect-assistant': 'workspace.read',
  'connected-apps': 'oauth_clients.manage',
  'oauth-clients': 'oauth_clients.manage',
  wallet: 'wallet.read',
  'audit-log': 'audit.read',
  approvals: 'contents.read',
};

/** The sections a credential may use, in navigation order. */
export function sectionsFor(access: Access): SectionId[] {
  return SECTIONS.filter((s) => allows(access, SECTION_PERMISSIONS[s.id])).map((s) => s.id);
}
