/**
 * Roles and what each may do: the one table every authorization decision reads (`authorize.ts`). A role is a set
 * of permissions; "at most my role" (a key, an invitation or an assistant's grant never above its creator's) is
 * set inclusion, so roles that are not ranked against each other (a contributor drafts, a client approves) are
 * never handed out by one another.
 */

export const ROLES = ['owner', 'admin', 'editor', 'contributor', 'viewer', 'client'] as const;
export type Role = (typeof ROLES)[number];

/** What a role may do, one name per kind of operation. The doors name these when they refuse. */
export const PERMISSIONS = [
  'workspace.read',
  'brands.read',
  'brands.manage',
  'connections.read',
  'connections.manage',
  'contents.read',
  // Create and edit drafts, submit them for approval.
  'contents.draft',
  // Schedule, publish now, cancel, retry, edit what is scheduled: anything that makes a content go out.
  'contents.publish',
  'contents.approve',
  'contents.comment',
  'media.read',
  'media.upload',
  'media.delete',
  'webhooks.read',
  'webhooks.manage',
  'api_keys.manage',
  'oauth_clients.manage',
  'wallet.read',
  'wallet.pay',
  'members.read',
  'members.manage',
  // Make, demote or remove an owner.
  'members.manage_owners',
  'audit.read',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const EDITOR: readonly Permission[] = [
  'workspace.read',
  'brands.read',
  'connections.read',
  'contents.read',
  'contents.draft',
  'contents.publish',
  'contents.approve',
  'contents.comment',
  'media.read',
  'media.upload',
  'media.delete',
  'members.read',
];

/**
 * The matrix. `admin` holds every permission the interface spec lets an API key use (keys made before roles
 * existed are admins, so their holders see no change); only an owner manages owners.
 */
export const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = {
  owner: new Set(PERMISSIONS),
  admin: new Set(PERMISSIONS.filter((p) => p !== 'members.manage_owners')),
  editor: new Set(EDITOR),
  contributor: new Set<Permission>(['workspace.read', 'brands.read', 'connections.read', 'contents.read', 'contents.draft', 'contents.comment', 'media.read', 'media.upload', 'members.read']),
  viewer: new Set<Permission>(['workspace.read', 'brands.read', 'connections.read', 'contents.read', 'media.read', 'members.read']),
  client: new Set<Permission>(['workspace.read', 'brands.read', 'contents.read', 'contents.approve', 'contents.comment', 'media.read']),
};

/** Permissions that only make sense over the whole workspace: a member limited to some brands never holds them. */
export const WORKSPACE_WIDE: ReadonlySet<Permission> = new Set<Permission>([
  'brands.manage',
  'webhooks.read',
  'webhooks.manage',
  'api_keys.manage',
  'oauth_clients.manage',
  'wallet.read',
  'wallet.pay',
  'members.manage',
  'members.manage_owners',
  'audit.read',
]);

export function roleCan(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}

/** Whether everything `role` may do, `ceiling` may do too (a credential is never made above its maker). */
export function roleWithin(role: Role, ceiling: Role): boolean {
  for (const p of ROLE_PERMISSIONS[role]) if (!ROLE_PERMISSIONS[ceiling].has(p)) return false;
  return true;
}

/** Whether a brand list fits inside another (null is every brand). */
export function brandsWithin(brandIds: readonly string[] | null, ceiling: readonly string[] | null): boolean {
  if (ceiling === null) return true;
  if (brandIds === null) return false;
  return brandIds.every((b) => ceiling.includes(b));
}
