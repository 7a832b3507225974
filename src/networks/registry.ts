import type { NetworkAdapter } from './adapter.js';
import { createFacebookAdapter } from './facebook/adapter.js';
import { createFacebookOAuth } from './facebook/oauth.js';
import { createInstagramAdapter } from './instagram/adapter.js';
import { createInstagramOAuth } from './instagram/oauth.js';
import { createLinkedinAdapter } from './linkedin/adapter.js';
import { createLinkedinOAuth } from './linkedin/oauth.js';
import type { PlatformSlug } from '../vocabulary/platforms.js';
import type { NetworkDeps, NetworkSettings } from './network-deps.js';
import type { NetworkOAuth } from './network-oauth.js';
import { createThreadsAdapter } from './threads/adapter.js';
import { createThreadsOAuth } from './threads/oauth.js';
import { createYoutubeAdapter } from './youtube/adapter.js';
import { createYoutubeOAuth } from './youtube/oauth.js';

type Factories = {
  adapter(settings: NetworkSettings, deps: NetworkDeps): NetworkAdapter;
  oauth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth;
};

/** One adapter per network, all behind the same interface as the sandbox. */
const FACTORIES: Record<PlatformSlug, Factories> = {
  instagram: { adapter: createInstagramAdapter, oauth: createInstagramOAuth },
  facebook: { adapter: createFacebookAdapter, oauth: createFacebookOAuth },
  threads: { adapter: createThreadsAdapter, oauth: createThreadsOAuth },
  linkedin: { adapter: createLinkedinAdapter, oauth: createLinkedinOAuth },
  youtube: { adapter: createYoutubeAdapter, oauth: createYoutubeOAuth },
};

export interface NetworkRegistry {
  /** The adapter for a connection: the sandbox for sandbox connections, the network's own for live ones. */
  adapterFor(mode: string, platform: PlatformSlug): NetworkAdapter;
  /** The network's OAuth, or null when this installation has no client id/secret for it. */
  oauthFor(platform: PlatformSlug): NetworkOAuth | null;
  liveAvailable(platform: PlatformSlug): boolean;
}

export function createNetworkRegistry(settings: Record<PlatformSlug, NetworkSettings>, deps: NetworkDeps, sandbox: NetworkAdapter): NetworkRegistry {
  const configured = (p: PlatformSlug) => settings[p].clientId !== undefined && settings[p].clientSecret !== undefined;
  const adapters = new Map<PlatformSlug, NetworkAdapter>();
  const oauths = new Map<PlatformSlug, NetworkOAuth>();
  return {
    adapterFor(mode, platform) {
      if (mode !== 'live') return sandbox;
      let adapter = adapters.get(platform);
      if (!adapter) {
        adapter = FACTORIES[platform].adapter(settings[platform], deps);
        adapters.set(platform, adapter);
      }
      return adapter;
    },
    oauthFor(platform) {
      if (!configured(platform)) return null;
      let oauth = oauths.get(platform);
      if (!oauth) {
        oauth = FACTORIES[platform].oauth(settings[platform], deps);
        oauths.set(platform, oauth);
      }
      return oauth;
    },
    liveAvailable: configured,
  };
}
