/**
 * Who is calling, as the core sees it. Doors resolve credentials into a Principal; the core never sees the
 * credential itself.
 */
export type Principal =
  | { kind: 'api_key'; workspaceId: string; keyId: string }
  | { kind: 'oauth'; workspaceId: string; clientId: string; keyId: string | null };
