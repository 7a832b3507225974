import { expect, it } from 'vitest';
import { describeEachDb } from '../support/server.js';

/**
 * The REST door's routes sit on Express routers, one per path prefix (src/http/mount.ts); these are the router's
 * answers the door keeps.
 */
describeEachDb('REST route dispatch', (server) => {
  it('answers HEAD like GET without a body, a trailing slash and any letter case like the plain path', async () => {
    const ws = await server().workspace();
    const path = `/api/v1/workspaces/${ws.workspace_id}/api-keys`;
    const auth = { authorization: `Bearer ${ws.api_key}` };
    const get = await fetch(`${server().url}${path}`, { headers: auth });
    const getBody = await get.text();
    expect(get.status).toBe(200);
    expect(get.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(get.headers.get('content-length'))).toBe(Buffer.byteLength(getBody));

    const head = await fetch(`${server().url}${path}`, { method: 'HEAD', headers: auth });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(head.headers.get('x-ratelimit-limit')).toBe('600');

    for (const variant of [`${path}/`, path.replace('/api-keys', '/API-KEYS')]) {
      const res = await fetch(`${server().url}${variant}`, { headers: auth });
      expect(res.status, variant).toBe(200);
      expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(1);
    }
  });

  it('passes paths it does not declare to the next router, and decodes parameters once', async () => {
    const ws = await server().workspace();
    const auth = { authorization: `Bearer ${ws.api_key}` };
    // Longer and shorter than any declared path: the catch-all 404 in the spec's shape, not a REST answer.
    for (const path of [`/api/v1/workspaces/${ws.workspace_id}/api-keys/a/b/c/d`, '/api/v1/nothing']) {
      const res = await fetch(`${server().url}${path}`, { headers: auth });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: string }).error).toBe('not_found');
    }
    // An encoded id reaches the core decoded: the key is simply unknown, not a malformed path.
    const encoded = await fetch(`${server().url}/api/v1/workspaces/${ws.workspace_id}/api-keys/key%5Fnone`, { method: 'DELETE', headers: auth });
    expect(encoded.status).toBe(404);
    expect(((await encoded.json()) as { message: string }).message).toContain('key_none');
  });

  it('serves parallel reads of several routes, each with its own parameters', async () => {
    const [a, b] = [await server().workspace('a'), await server().workspace('b')];
    const answers = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const ws = i % 2 === 0 ? a : b;
        const path = i % 4 < 2 ? `/api/v1/workspaces/${ws.workspace_id}/api-keys` : '/api/v1/me';
        const res = await fetch(`${server().url}${path}`, { headers: { authorization: `Bearer ${ws.api_key}` } });
        return { ws: ws.workspace_id, path, status: res.status, body: (await res.json()) as Record<string, unknown> };
      }),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      if (answer.path === '/api/v1/me') expect(JSON.stringify(answer.body)).toContain(answer.ws);
    }
  });
});
