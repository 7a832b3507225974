import type { NetworkDeps } from '../network-deps.js';

/**
 * The fetch for a host a user named (NetworkDeps.userHostFetch), watched: `blocked()` tells whether the outbound
 * guard refused the address (a private, local or metadata address), which is no passing fault to retry, apart
 * from silence. The guard's error is recognised by name: the networks do not import the media layer.
 */
export function watchedUserHostFetch(deps: Pick<NetworkDeps, 'userHostFetch'>): { fetch: typeof globalThis.fetch; blocked(): boolean } {
  let blocked = false;
  return {
    fetch: async (input, init) => {
      try {
        return await deps.userHostFetch(input, init);
      } catch (err) {
        if (err instanceof Error && err.name === 'OutboundBlockedError') blocked = true;
        throw err;
      }
    },
    blocked: () => blocked,
  };
}
