import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ApiResponse, TestServer } from '../support/server.js';
import { describeEachDb } from '../support/server.js';

/**
 * Spec 2.1 and 3.1: `revoke_others` is an atomic rotation. Whatever runs beside it (a leaked key minting keys
 * as fast as it can, other rotations), afterwards exactly the rotating request's key is active and no key
 * minted by a revoked key survives.
 */

async function activeKeys(server: TestServer, workspaceId: string): Promise<string[]> {
  const rows = await server.container.db.kysely
    .selectFrom('api_keys')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at', 'is', null)
    .execute();
  return rows.map((r) => r.id);
}

function createKey(server: TestServer, workspaceId: string, key: string, body: Record<string, unknown>): Promise<ApiResponse> {
  return server.request('POST', `/api/v1/workspaces/${workspaceId}/api-keys`, { key, body });
}

describeEachDb('API key rotation under concurrency', (server) => {
  // The rotation is sent first, in the middle and last among 40 creations with the leaked key: each place gives
  // other interleavings of the two kinds of request.
  for (const position of [0, 13, 27, 40]) {
    it(`a rotation among 40 parallel creations with a leaked key leaves exactly the new key (rotation sent ${position}th)`, async () => {
      const ws = await server().workspace();
      const leaked = await createKey(server(), ws.workspace_id, ws.api_key, { name: 'leaked' });
      expect(leaked.status).toBe(201);
      const leakedKey = leaked.body.api_key as string;

      const sends: Promise<ApiResponse>[] = [];
      let rotation: Promise<ApiResponse> | undefined;
      for (let i = 0; i <= 40; i++) {
        if (i === position) {
          rotation = createKey(server(), ws.workspace_id, ws.api_key, { name: 'rotated', revoke_others: true });
          sends.push(rotation);
        }
        if (i < 40) sends.push(createKey(server(), ws.workspace_id, leakedKey, { name: `minted by leak ${i}` }));
      }
      const all = await Promise.all(sends);
      const rotated = await rotation!;
      expect(rotated.status).toBe(201);

      const minted = all.filter((r) => r !== rotated);
      for (const r of minted) {
        expect([201, 401]).toContain(r.status);
        if (r.status === 401) expect(r.body.error).toBe('invalid_api_key');
      }
      const mintedIds = minted.filter((r) => r.status === 201).map((r) => r.body.id as string);

      // Exactly the rotating request's key is active: every key the leak minted is revoked with it.
      expect(await activeKeys(server(), ws.workspace_id)).toEqual([rotated.body.id]);
      // Every key the leak managed to mint existed before the rotation and was counted by it (the owner's key,
      // the leaked key and each of them): none was committed after it.
      expect(rotated.body.revoked_other_keys).toBe(2 + mintedIds.length);

      // The leaked key and all it minted are refused from now on.
      const after = await createKey(server(), ws.workspace_id, leakedKey, { name: 'too late' });
      expect(after.status).toBe(401);
    });
  }

  it('ten parallel rotations with one key: one succeeds, the others are refused, one key is active', async () => {
    const ws = await server().workspace();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => createKey(server(), ws.workspace_id, ws.api_key, { name: `rotation ${i}`, revoke_others: true })),
    );
    const won = results.filter((r) => r.status === 201);
    expect(won).toHaveLength(1);
    expect(results.filter((r) => r.status === 401)).toHaveLength(9);
    expect(won[0]!.body.revoked_other_keys).toBe(1);
    expect(await activeKeys(server(), ws.workspace_id)).toEqual([won[0]!.body.id]);
  });

  it('a key revoked while it mints keys: nothing it sends after the revocation is created', async () => {
    const ws = await server().workspace();
    const leaked = await createKey(server(), ws.workspace_id, ws.api_key, { name: 'leaked' });
    const leakedKey = leaked.body.api_key as string;
    const mints = Array.from({ length: 20 }, (_, i) => createKey(server(), ws.workspace_id, leakedKey, { name: `m${i}` }));
    const revoke = server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/api-keys/${leaked.body.id as string}`, { key: ws.api_key });
    const [revoked, ...results] = await Promise.all([revoke, ...mints]);
    expect(revoked!.status).toBe(204);
    // Keys committed before the revocation were created by an active key; the rest were refused. Then a rotation
    // by the owner leaves the owner's new key alone.
    for (const r of results) expect([201, 401]).toContain(r.status);
    const db = server().container.db.kysely;
    const leakRow = await db.selectFrom('api_keys').select('revoked_at').where('id', '=', leaked.body.id as string).executeTakeFirstOrThrow();
    for (const r of results.filter((x) => x.status === 201)) {
      const row = await db.selectFrom('api_keys').select('created_at').where('id', '=', r.body.id as string).executeTakeFirstOrThrow();
      expect(Number(row.created_at)).toBeLessThanOrEqual(Number(leakRow.revoked_at));
    }
    const rotated = await createKey(server(), ws.workspace_id, ws.api_key, { name: 'rotated', revoke_others: true });
    expect(rotated.body.revoked_other_keys).toBe(1 + results.filter((r) => r.status === 201).length);
    expect(await activeKeys(server(), ws.workspace_id)).toEqual([rotated.body.id]);
  });
});

describe('API key writes go through the serialised path', () => {
  // Every write to a workspace's keys must take the workspace's key lock first (api-keys.service.ts
  // `keyChange`/`mintApiKey`); a second caller of the repository's writes would reopen the rotation race.
  it('only the API keys service imports the key-writing repository functions', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts')) files.push(path);
      }
    };
    for (const dir of ['src', 'oauth', 'tools']) walk(join(root, dir));
    const writers = files
      .filter((f) => /\b(insertApiKey|revokeApiKey|revokeOtherApiKeys)\b/.test(readFileSync(f, 'utf8')) && readFileSync(f, 'utf8').includes('api-keys.repo'))
      .map((f) => relative(root, f));
    expect(writers).toEqual(['src/core/api-keys/api-keys.service.ts']);
  });
});
