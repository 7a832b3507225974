import ipaddr from 'ipaddr.js';

/**
 * Who can reach the service's MCP endpoint, judged from `BASE_URL` alone (no lookup is made):
 * - `this_computer`: a loopback name or address; only programs on the same machine connect;
 * - `local_network`: a private, link-local or shared address, or a name only a local network resolves;
 * - `internet`: any other name or address.
 */
export type AssistantReach = 'this_computer' | 'local_network' | 'internet';

export interface AssistantEndpoint {
  /** The MCP endpoint exactly as clients must be given it: `{BASE_URL}/mcp` (OAuth clients compare it as a string). */
  mcpUrl: string;
  reach: AssistantReach;
  /** Whether the address is https; the cloud assistants' connectors ask for it. */
  https: boolean;
}

/** Suffixes of names that resolve only inside a local network (mDNS, RFC 8375 home networks, common LAN zones). */
const LOCAL_SUFFIXES = ['.local', '.lan', '.home.arpa', '.internal', '.intranet'];

const LOCAL_RANGES = new Set(['private', 'uniqueLocal', 'linkLocal', 'carrierGradeNat']);

function reachOfHost(host: string): AssistantReach {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return 'this_computer';
  if (ipaddr.isValid(name)) {
    const range = ipaddr.process(name).range();
    if (range === 'loopback' || range === 'unspecified') return 'this_computer';
    return LOCAL_RANGES.has(range) ? 'local_network' : 'internet';
  }
  // A single-label name (`publisher`, a container's name) is resolved by local means only.
  if (!name.includes('.')) return 'local_network';
  return LOCAL_SUFFIXES.some((suffix) => name.endsWith(suffix)) ? 'local_network' : 'internet';
}

/**
 * The MCP endpoint of a service published at `baseUrl` and who can reach it. Cloud assistants (Claude's custom
 * connectors, ChatGPT's connectors) call from their companies' servers, so they need `internet` (and https);
 * assistants running on the user's computer reach any address that computer reaches. Raises nothing: an
 * unparsable address (the configuration refuses one at start) counts as `internet` and is returned as given.
 */
export function assistantEndpoint(baseUrl: string): AssistantEndpoint {
  const base = baseUrl.replace(/\/+$/, '');
  const mcpUrl = `${base}/mcp`;
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return { mcpUrl, reach: 'internet', https: base.startsWith('https:') };
  }
  return { mcpUrl, reach: reachOfHost(url.hostname), https: url.protocol === 'https:' };
}
