import type { Role } from './permissions/roles.js';

/** What a credential may do, whoever holds it: its role and the brands it is limited to (null: every brand). */
export interface Access {
  role: Role;
  brandIds: readonly string[] | null;
}

/** Where a request came from, for the audit log; the doors fill it, the core copies it. */
export interface Origin {
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  via: 'rest' | 'mcp' | 'dashboard' | 'cli' | 'system';
}

/**
 * Who is calling, as the core sees it. Doors resolve credentials into a Principal; the core never sees the
 * credential itself. `keyId` is the API key behind the call (a key, or the key that approved an OAuth grant);
 * `userId` the person (signed in, or who approved the grant).
 */
export type Principal = Access & { origin?: Origin } & (
    | { kind: 'api_key'; workspaceId: string; keyId: string; userId?: null }
    | { kind: 'oauth'; workspaceId: string; clientId: string; keyId: string | null; userId?: string | null }
    | { kind: 'user'; workspaceId: string; userId: string; sessionId: string; keyId: null }
  );
