import { Agent, request } from 'node:http';
import { afterAll, expect, it } from 'vitest';
import { testDatabaseKinds } from '../support/databases.js';
import { startServiceProcess } from '../support/process.js';
import { TEST_SECRET_KEY } from '../support/server.js';

interface Answer {
  status: number;
  connection: string | undefined;
  socket: number;
}

const sockets = new WeakMap<object, number>();
let socketCount = 0;

/** A GET through `agent`, saying which of the agent's sockets carried it. */
function get(agent: Agent, url: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, socket: sockets.get(req.socket!) ?? -1 }));
    });
    req.on('socket', (s) => {
      if (!sockets.has(s)) sockets.set(s, (socketCount += 1));
    });
    req.on('error', reject);
    req.end();
  });
}

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

it('SIGTERM: requests sent on kept-alive connections after the signal are answered, with Connection: close, and the process exits 0', async () => {
  const kind = testDatabaseKinds().find((k) => k.name === 'sqlite')!;
  const database = await kind.create();
  cleanups.push(() => database.drop());
  const service = await startServiceProcess({ DATABASE_URL: database.url, SECRET_KEY: TEST_SECRET_KEY, LOG_LEVEL: 'info' });
  cleanups.push(() => service.stop('SIGKILL'));
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  cleanups.push(async () => agent.destroy());
  const url = `${service.url}/healthz`;

  // Four connections, each kept alive and idle once its answer is in.
  const before = await Promise.all(Array.from({ length: 4 }, () => get(agent, url)));
  expect(before.map((a) => a.status)).toEqual([200, 200, 200, 200]);
  expect(before.every((a) => a.connection === 'keep-alive')).toBe(true);
  const open = new Set(before.map((a) => a.socket));
  expect(open.size).toBe(4);

  const exited = new Promise<number | null>((resolve) => service.child.once('exit', resolve));
  service.child.kill('SIGTERM');
  const deadline = Date.now() + 10_000;
  while (!service.stdout().includes('shutting down') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(service.stdout()).toContain('shutting down');

  // The process is stopping: each client sends its next request on the connection it kept. None is reset; each is
  // answered on that same connection and told to close it.
  const after = await Promise.all(Array.from({ length: 4 }, () => get(agent, url)));
  expect(after.map((a) => a.status)).toEqual([200, 200, 200, 200]);
  expect(after.map((a) => a.connection)).toEqual(['close', 'close', 'close', 'close']);
  expect(after.every((a) => open.has(a.socket))).toBe(true);

  // New connections are refused, and the process ends cleanly.
  await expect(get(agent, url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  expect(await exited).toBe(0);
}, 90_000);
