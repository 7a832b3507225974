import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { parseConfig } from '../../src/config.js';
import type { ContainerOptions } from '../../src/container.js';
import { ManualClock } from '../../src/core/clock.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { type RunningService, startService } from '../../src/server.js';
import { type TestDatabase, type TestDatabaseKind, testDatabaseKinds } from './databases.js';
import { ResponseConformance } from './openapi.js';
import { overrides, serviceEnv } from './overrides.js';

export const TEST_SECRET_KEY = '0f'.repeat(32);

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as is, bypassing JSON encoding. */
  rawBody?: string;
  headers?: Record<string, string>;
  /** Skip the OpenAPI conformance check (for deliberately undocumented requests). */
  unchecked?: boolean;
}

/** A real server on a free port, its database, and an HTTP client that checks every answer against /openapi.yaml. */
export class TestServer {
  private conformance: ResponseConformance | undefined;

  constructor(
    readonly service: RunningService,
    readonly database: TestDatabase,
  ) {}

  get url(): string {
    return this.service.listenUrl;
  }

  get container() {
    return this.service.container;
  }

  async workspace(name = 'Test workspace'): Promise<NewWorkspace> {
    return this.service.container.services.workspaces.create({ name });
  }

  async openapi(): Promise<ResponseConformance> {
    if (!this.conformance) {
      const res = await fetch(`${this.url}/openapi.yaml`);
      this.conformance = ResponseConformance.fromYaml(await res.text());
    }
    return this.conformance;
  }

  async request<T = Record<string, unknown>>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    return checkedRequest<T>(this.url, () => this.openapi(), method, path, options);
  }

  /**
   * Runs the workers until no job is active: drains due work, then moves the manual clock to the next due
   * job, and again. Time jumps exactly to each scheduled moment, so retry and confirmation schedules are
   * walked in milliseconds.
   */
  async settle(maxSteps = 500): Promise<void> {
    const clock = this.container.clock;
    if (!(clock instanceof ManualClock)) throw new Error('settle() needs a ManualClock');
    for (let step = 0; step < maxSteps; step++) {
      // Scheduled contents due at the clock's now start first (their jobs become due); later ones wait.
      await this.container.scheduler.drain();
      await this.container.publisher.drain();
      const next = await this.container.db.kysely
        .selectFrom('jobs')
        .select((eb) => eb.fn.min('run_at').as('at'))
        .where('active', '=', 1)
        .executeTakeFirst();
      if (next?.at === null || next?.at === undefined) return;
      clock.set(Math.max(clock.now(), Number(next.at)));
    }
    throw new Error('jobs did not settle');
  }

  async stop(): Promise<void> {
    await this.service.stop(1000);
    await this.database.drop();
  }
}

/**
 * One HTTP request to `baseUrl`, its answer checked against the served /openapi.yaml unless `unchecked`. `label`
 * names the process in a failure message when several serve the same database.
 */
export async function checkedRequest<T = Record<string, unknown>>(
  baseUrl: string,
  openapi: () => Promise<ResponseConformance>,
  method: string,
  path: string,
  options: RequestOptions = {},
  label?: string,
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  const isJson = (res.headers.get('content-type') ?? '').includes('json');
  const parsed = isJson && text.length > 0 ? (JSON.parse(text) as T) : (undefined as T);
  if (!options.unchecked) {
    const problems = (await openapi()).check(method, new URL(path, baseUrl).pathname, res.status, parsed);
    expect(problems, `response conformance of ${method} ${path}${label === undefined ? '' : ` (${label})`}`).toEqual([]);
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export async function startTestServer(
  kind: TestDatabaseKind,
  env: Record<string, string> = {},
  options: ContainerOptions & { workers?: boolean } = {},
): Promise<TestServer> {
  return startTestServerOn(await kind.create(), env, options);
}

/** A server on an existing database (e.g. a restart: stop the old one with `service.stop()`, not `stop()`). */
export async function startTestServerOn(
  database: TestDatabase,
  env: Record<string, string> = {},
  options: ContainerOptions & { workers?: boolean } = {},
): Promise<TestServer> {
  const mediaDir = mkdtempSync(join(tmpdir(), 'publisher-media-'));
  const config = parseConfig(
    serviceEnv({ DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SECRET_KEY: TEST_SECRET_KEY, MEDIA_DIR: mediaDir }, overrides({ SANDBOX_DELAY: '0ms' }), env),
  );
  const service = await startService(config, options);
  return new TestServer(service, {
    ...database,
    drop: async () => {
      rmSync(mediaDir, { recursive: true, force: true });
      await database.drop();
    },
  });
}

/**
 * Runs `body` once per test database (SQLite, and PostgreSQL when TEST_DATABASE_URL is set), each with its own
 * fresh database and server.
 */
export function describeEachDb(
  title: string,
  body: (server: () => TestServer, kind: TestDatabaseKind) => void,
  env: Record<string, string> = {},
  options: () => ContainerOptions & { workers?: boolean } = () => ({}),
): void {
  for (const kind of testDatabaseKinds()) {
    describe(`${title} [${kind.name}]`, () => {
      let server: TestServer | undefined;
      beforeAll(async () => {
        server = await startTestServer(kind, env, options());
      });
      afterAll(async () => {
        await server?.stop();
      });
      body(() => {
        if (!server) throw new Error('server not started');
        return server;
      }, kind);
    });
  }
}
