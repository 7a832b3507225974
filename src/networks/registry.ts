import type { NetworkAdapter } from './adapter.js';
import { createBlueskyAdapter } from './bluesky/adapter.js';
import { createBlueskyPasswordLogin } from './bluesky/session.js';
import { createFacebookAdapter } from './facebook/adapter.js';
import { createFacebookOAuth } from './facebook/oauth.js';
import { createInstagramAdapter } from './instagram/adapter.js';
import { createInstagramOAuth } from './instagram/oauth.js';
import { createLinkedinAdapter } from './linkedin/adapter.js';
import { createLinkedinOAuth } from './linkedin/oauth.js';
import { PLATFORMS, type PlatformSlug } from '../vocabulary/platforms.js';
import type { NetworkDeps, NetworkSettings } from './network-deps.js';
import type { NetworkOAuth, NetworkPasswordLogin } from './network-oauth.js';
import { createMastodonAdapter } from './mastodon/adapter.js';
import { createMastodonOAuth } from './mastodon/oauth.js';
import { createPinterestAdapter } from './pinterest/adapter.js';
import { createPinterestOAuth } from './pinterest/oauth.js';
import { createThreadsAdapter } from './threads/adapter.js';
import { createThreadsOAuth } from './threads/oauth.js';
import { createTiktokAdapter } from './tiktok/adapter.js';
import { createTiktokOAuth } from './tiktok/oauth.js';
import { createXAdapter } from './x/adapter.js';
import { createXOAuth } from './x/oauth.js';
import { createYoutubeAdapter } from './youtube/adapter.js';
import { createYoutubeOAuth } from './youtube/oauth.js';

/** How a network is reached live: its adapter, and the way an account is connected (PlatformInfo.connect). */
type Factories = {
  adapter(settings: NetworkSettings, deps: NetworkDeps): NetworkAdapter;
  oauth?(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth;
  password?(settings: NetworkSettings, deps: NetworkDeps): NetworkPasswordLogin;
};

/** One adapter per network, all behind the same interface as the sandbox. */
const FACTORIES: Record<PlatformSlug, Factories> = {
  instagram: { adapter: createInstagramAdapter, oauth: createInstagramOAuth },
  facebook: { adapter: createFacebookAdapter, oauth: createFacebookOAuth },
  threads: { adapter: createThreadsAdapter, oauth: createThreadsOAuth },
  linkedin: { adapter: createLinkedinAdapter, oauth: createLinkedinOAuth },
  youtube: { adapter: createYoutubeAdapter, oauth: createYoutubeOAuth },
  pinterest: { adapter: createPinterestAdapter, oauth: createPinterestOAuth },
  x: { adapter: createXAdapter, oauth: createXOAuth },
  mastodon: { adapter: createMastodonAdapter, oauth: createMastodonOAuth },
  bluesky: {
    adapter: (settings, deps) => createBlueskyAdapter(settings, deps, settings.mediaServiceUrl ? { videoServiceUrl: settings.mediaServiceUrl } : {}),
    password: createBlueskyPasswordLogin,
  },
  tiktok: {
    adapter: (settings, deps) =>
      createTiktokAdapter(settings, deps, settings.posting && { mode: settings.posting.mode, audited: settings.posting.appAudited, pullVideosFromUrl: settings.posting.pullVideosFromUrl }),
    oauth: createTiktokOAuth,
  },
};

export interface NetworkRegistry {
  /** The adapter for a connection: the sandbox for sandbox connections, the network's own for live ones. */
  adapterFor(mode: string, platform: PlatformSlug): NetworkAdapter;
  /** The network's OAuth, or null when this installation cannot start it (no client id/secret, or no OAuth). */
  oauthFor(platform: PlatformSlug): NetworkOAuth | null;
  /** The network's app-password sign-in, or null when it has none. */
  passwordLoginFor(platform: PlatformSlug): NetworkPasswordLogin | null;
  liveAvailable(platform: PlatformSlug): boolean;
}

export function createNetworkRegistry(settings: Record<PlatformSlug, NetworkSettings>, deps: NetworkDeps, sandbox: NetworkAdapter): NetworkRegistry {
  // Per-server and app-password networks need no installation-wide client: the user's server issues one.
  const configured = (p: PlatformSlug) =>
    PLATFORMS[p].connect !== 'oauth' || (settings[p].clientId !== undefined && settings[p].clientSecret !== undefined);
  const built = new Map<string, unknown>();
  function once<T>(key: string, make: () => T): T {
    if (!built.has(key)) built.set(key, make());
    return built.get(key) as T;
  }
  return {
    adapterFor(mode, platform) {
      if (mode !== 'live') return sandbox;
      return once(`adapter:${platform}`, () => FACTORIES[platform].adapter(settings[platform], deps));
    },
    oauthFor(platform) {
      const make = FACTORIES[platform].oauth;
      if (!make || !configured(platform)) return null;
      return once(`oauth:${platform}`, () => make(settings[platform], deps));
    },
    passwordLoginFor(platform) {
      const make = FACTORIES[platform].password;
      if (!make) return null;
      return once(`password:${platform}`, () => make(settings[platform], deps));
    },
    liveAvailable: configured,
  };
}
