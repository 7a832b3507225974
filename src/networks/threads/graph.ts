import type { Classified } from '../kit/failure.js';
import { createGraphClient, type GraphClient } from '../meta-graph/client.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { classifyThreadsError } from './errors.js';

/** The Graph client as Threads (graph.threads.net) uses it. */
export function threadsGraph(settings: NetworkSettings, deps: NetworkDeps): GraphClient<Classified> {
  return createGraphClient(deps, { network: 'threads', apiBaseUrl: settings.apiBaseUrl, classify: classifyThreadsError });
}
