/** Meta's Graph API error envelope, as Facebook Pages and Threads send it. */
export function graphError(code: number, message: string, extra: { subcode?: number; type?: string; transient?: boolean } = {}) {
  return {
    error: {
      message,
      type: extra.type ?? 'OAuthException',
      code,
      ...(extra.subcode !== undefined ? { error_subcode: extra.subcode } : {}),
      ...(extra.transient !== undefined ? { is_transient: extra.transient } : {}),
      fbtrace_id: 'AFakeTrace',
    },
  };
}
