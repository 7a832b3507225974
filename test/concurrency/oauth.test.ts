import { expect, it } from 'vitest';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { Browser, pkcePair } from '../support/oauth-browser.js';
import { type Cluster, type Door, describeCluster } from './support.js';

/**
 * RFC 6749 §4.1.2: an authorization code is single-use. Token requests racing with one code, split between the
 * processes, get one access token between them; the rest are refused with invalid_grant.
 */

const REDIRECT = 'https://claude.ai/api/mcp/auth_callback';

interface Code {
  clientId: string;
  code: string;
  verifier: string;
}

async function register(cluster: Cluster): Promise<string> {
  const res = await fetch(`${cluster.baseUrl}/api/oauth/mcp/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Racing client', redirect_uris: [REDIRECT] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** One completed consent for a public client with PKCE: the code it brings back. */
async function authorizationCode(cluster: Cluster, clientId: string, apiKey: string): Promise<Code> {
  const base = cluster.baseUrl;
  const { verifier, challenge } = pkcePair();
  const auth = new URL(`${base}/api/oauth/mcp/authorize`);
  auth.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'mcp',
    state: 'race',
    resource: `${base}/mcp`,
  }).toString();
  const callback = await new Browser().authorize(auth.toString(), base, apiKey);
  const code = callback.searchParams.get('code');
  if (code === null) throw new Error(`no code: ${callback.toString()}`);
  return { clientId, code, verifier };
}

async function redeem(cluster: Cluster, door: Door, c: Code): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(`${door.url}/api/oauth/mcp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, client_id: c.clientId, code_verifier: c.verifier, resource: `${cluster.baseUrl}/mcp` }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** Access tokens among `tokens` that still open the workspace on some process. */
async function working(cluster: Cluster, ws: NewWorkspace, tokens: string[]): Promise<string[]> {
  const live: string[] = [];
  for (const token of tokens) {
    for (const door of cluster.doors) {
      const res = await door.request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: token });
      expect([200, 401]).toContain(res.status);
      if (res.status === 200) {
        live.push(token);
        break;
      }
    }
  }
  return live;
}

describeCluster('concurrent authorization-code redemption', (cluster) => {
  async function race(ws: NewWorkspace, clientId: string, n: number) {
    const code = await authorizationCode(cluster(), clientId, ws.api_key);
    const results = await cluster().split(n, (door) => redeem(cluster(), door, code));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    for (const r of refused) {
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid_grant');
    }
    return { ok, refused, live: await working(cluster(), ws, ok.map((r) => r.body.access_token!)) };
  }

  it('2 parallel token requests with one code, one per process, 6 codes in a row: exactly one 200 each time, never two live tokens', async () => {
    const ws = await cluster().workspace();
    const clientId = await register(cluster());
    const outcomes: string[] = [];
    for (let round = 0; round < 6; round++) {
      const { ok, live } = await race(ws, clientId, 2);
      outcomes.push(`${ok.length} issued, ${live.length} live`);
    }
    expect(outcomes).toEqual(Array.from({ length: 6 }, () => expect.stringMatching(/^1 issued, [01] live$/)));
  });

  it('20 parallel token requests with one code split between the processes: exactly one 200, 19 invalid_grant, at most one live token', async () => {
    const ws = await cluster().workspace();
    const clientId = await register(cluster());
    const { ok, refused, live } = await race(ws, clientId, 20);
    expect(ok, 'token requests that got a token').toHaveLength(1);
    expect(refused).toHaveLength(19);
    expect(live.length).toBeLessThanOrEqual(1);
  });
});
