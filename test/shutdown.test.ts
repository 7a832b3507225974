import { request } from 'node:http';
import { expect, it } from 'vitest';
import { testDatabaseKinds } from './support/databases.js';
import { startTestServer } from './support/server.js';

it('graceful stop: refuses new connections, finishes the request in flight, then closes the database', async () => {
  const [kind] = testDatabaseKinds();
  const server = await startTestServer(kind!);
  const ws = await server.workspace();
  const url = new URL(`${server.url}/api/v1/workspaces/${ws.workspace_id}/api-keys`);

  const inflight = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { authorization: `Bearer ${ws.api_key}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.write('{"name": "in fl');
    // Finish the body only after the stop has begun.
    setTimeout(() => req.end('ight"}'), 300);
  });
  await new Promise((r) => setTimeout(r, 100));
  const stopped = server.service.stop(5_000);
  await new Promise((r) => setTimeout(r, 50));
  await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();

  const done = await inflight;
  expect(done.status).toBe(201);
  expect(JSON.parse(done.body)).toMatchObject({ name: 'in flight' });
  await stopped;
  await expect(server.container.services.health.databaseReachable()).resolves.toBe(false);
  await server.database.drop();
});
