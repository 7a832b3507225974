import { createGraphClient, type GraphClient } from '../meta-graph/client.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { classifyFacebookError, type FacebookClassified } from './errors.js';

export type FacebookGraph = GraphClient<FacebookClassified>;

/** The Graph client as Facebook Pages use it: `appsecret_proof` on every token call when the secret is configured. */
export function facebookGraph(settings: NetworkSettings, deps: NetworkDeps): FacebookGraph {
  return createGraphClient(deps, { network: 'facebook', apiBaseUrl: settings.apiBaseUrl, appSecret: settings.clientSecret, classify: classifyFacebookError });
}
