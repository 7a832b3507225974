import type { NetworkSettings } from '../networks/network-deps.js';
import { PLATFORM_SLUGS, type PlatformSlug } from '../vocabulary/platforms.js';

/**
 * Each network's settings: its OAuth client from the environment, and its official endpoints. The endpoints are
 * not settings an operator changes; tests point them at local fakes through the test-only overrides.
 */

interface NetworkEndpoints {
  api: string;
  authorize: string;
  token: string;
  version?: string;
}

/** The official endpoints. */
export const NETWORK_DEFAULTS: Record<PlatformSlug, NetworkEndpoints> = {
  instagram: { api: 'https://graph.instagram.com/v23.0', authorize: 'https://www.instagram.com/oauth/authorize', token: 'https://api.instagram.com/oauth/access_token' },
  facebook: { api: 'https://graph.facebook.com/v23.0', authorize: 'https://www.facebook.com/v23.0/dialog/oauth', token: 'https://graph.facebook.com/v23.0/oauth/access_token' },
  threads: { api: 'https://graph.threads.net/v1.0', authorize: 'https://threads.net/oauth/authorize', token: 'https://graph.threads.net/oauth/access_token' },
  // A month LinkedIn still serves (each is served about a year); the process warns at start once it is 11 months old.
  linkedin: { api: 'https://api.linkedin.com', authorize: 'https://www.linkedin.com/oauth/v2/authorization', token: 'https://www.linkedin.com/oauth/v2/accessToken', version: '202610' },
  youtube: { api: 'https://www.googleapis.com', authorize: 'https://accounts.google.com/o/oauth2/v2/auth', token: 'https://oauth2.googleapis.com/token' },
  x: { api: 'https://api.x.com', authorize: 'https://x.com/i/oauth2/authorize', token: 'https://api.x.com/2/oauth2/token' },
  // Bluesky signs in with an app password at the account's entryway; there is no authorize page or client.
  bluesky: { api: 'https://bsky.social', authorize: 'https://bsky.social', token: 'https://bsky.social' },
  // Each user names their own Mastodon instance; these are only the suggestion shown when none is given.
  mastodon: { api: 'https://mastodon.social', authorize: 'https://mastodon.social/oauth/authorize', token: 'https://mastodon.social/oauth/token' },
  tiktok: { api: 'https://open.tiktokapis.com', authorize: 'https://www.tiktok.com/v2/auth/authorize/', token: 'https://open.tiktokapis.com/v2/oauth/token/' },
  pinterest: { api: 'https://api.pinterest.com/v5', authorize: 'https://www.pinterest.com/oauth/', token: 'https://api.pinterest.com/v5/oauth/token' },
};

/** Bluesky's video service (video.bsky.app), where videos are uploaded before a post names them. */
export const BLUESKY_VIDEO_SERVICE = 'https://video.bsky.app';

export type NetworkEndpointKey = `${Uppercase<PlatformSlug>}_${'API_URL' | 'AUTHORIZE_URL' | 'TOKEN_URL'}`;

/** The names of the endpoint overrides, `X_API_URL`, `X_AUTHORIZE_URL`, `X_TOKEN_URL`, … */
export const NETWORK_ENDPOINT_KEYS: readonly NetworkEndpointKey[] = PLATFORM_SLUGS.flatMap((slug) =>
  (['API_URL', 'AUTHORIZE_URL', 'TOKEN_URL'] as const).map((kind) => `${slug.toUpperCase() as Uppercase<PlatformSlug>}_${kind}` as const),
);

/** The TikTok posting choices an operator makes once TikTok has audited the app (`TIKTOK_*`). */
export interface TiktokPosting {
  mode: 'direct' | 'inbox';
  appAudited: boolean;
  pullVideosFromUrl: boolean;
}

export interface NetworkInputs {
  /** `<NETWORK>_CLIENT_ID` and `<NETWORK>_CLIENT_SECRET`, read from the environment. */
  env: Record<string, string | undefined>;
  /** Endpoint overrides (tests only), already checked as http(s) URLs. */
  endpoints: Partial<Record<NetworkEndpointKey, string>>;
  blueskyVideoUrl: string;
  linkedinApiVersion: string | undefined;
  tiktok: TiktokPosting;
}

/** Every network's settings. */
export function networkSettings(inputs: NetworkInputs): Record<PlatformSlug, NetworkSettings> {
  // API bases lose a trailing slash (paths are appended); authorize and token addresses are kept as given, since
  // some networks' end in one (Pinterest's /oauth/, TikTok's /v2/oauth/token/).
  const url = (key: NetworkEndpointKey, fallback: string, keepSlash = false): string => {
    const value = inputs.endpoints[key];
    if (value === undefined) return fallback;
    return keepSlash ? value : value.replace(/\/+$/, '');
  };
  const out = {} as Record<PlatformSlug, NetworkSettings>;
  for (const slug of PLATFORM_SLUGS) {
    const p = slug.toUpperCase() as Uppercase<PlatformSlug>;
    const d = NETWORK_DEFAULTS[slug];
    out[slug] = {
      clientId: inputs.env[`${p}_CLIENT_ID`] || undefined,
      clientSecret: inputs.env[`${p}_CLIENT_SECRET`] || undefined,
      apiBaseUrl: url(`${p}_API_URL`, d.api),
      authorizeUrl: url(`${p}_AUTHORIZE_URL`, d.authorize, true),
      tokenUrl: url(`${p}_TOKEN_URL`, d.token, true),
      apiVersion: slug === 'linkedin' ? (inputs.linkedinApiVersion ?? d.version) : d.version,
    };
  }
  out.bluesky.mediaServiceUrl = inputs.blueskyVideoUrl.replace(/\/+$/, '');
  out.tiktok.posting = inputs.tiktok;
  return out;
}
