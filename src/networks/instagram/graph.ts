import type { Classified } from '../kit/failure.js';
import { createGraphClient, type GraphClient } from '../meta-graph/client.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { classifyInstagramError } from './errors.js';

/** The Graph client as Instagram (graph.instagram.com) uses it; its token host answers through it too. */
export function instagramGraph(settings: NetworkSettings, deps: NetworkDeps): GraphClient<Classified> {
  return createGraphClient(deps, { network: 'instagram', apiBaseUrl: settings.apiBaseUrl, classify: classifyInstagramError });
}
