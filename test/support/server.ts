import { afterAll, beforeAll, describe, expect } from 'vitest';
import { parseConfig } from '../../src/config.js';
import type { ContainerOptions } from '../../src/container.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { type RunningService, startService } from '../../src/server.js';
import { type TestDatabase, type TestDatabaseKind, testDatabaseKinds } from './databases.js';
import { ResponseConformance } from './openapi.js';

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
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${this.url}${path}`, { method, headers, body });
    const text = await res.text();
    const isJson = (res.headers.get('content-type') ?? '').includes('json');
    const parsed = isJson && text.length > 0 ? (JSON.parse(text) as T) : (undefined as T);
    if (!options.unchecked) {
      const problems = (await this.openapi()).check(method, new URL(path, this.url).pathname, res.status, parsed);
      expect(problems, `response conformance of ${method} ${path}`).toEqual([]);
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  async stop(): Promise<void> {
    await this.service.stop(1000);
    await this.database.drop();
  }
}

export async function startTestServer(kind: TestDatabaseKind, env: Record<string, string> = {}, options: ContainerOptions = {}): Promise<TestServer> {
  const database = await kind.create();
  const config = parseConfig({ DATABASE_URL: database.url, PORT: '0', LOG_LEVEL: 'silent', SECRET_KEY: TEST_SECRET_KEY, ...env });
  const service = await startService(config, options);
  return new TestServer(service, database);
}

/**
 * Runs `body` once per test database (SQLite, and PostgreSQL when TEST_DATABASE_URL is set), each with its own
 * fresh database and server.
 */
export function describeEachDb(
  title: string,
  body: (server: () => TestServer, kind: TestDatabaseKind) => void,
  env: Record<string, string> = {},
): void {
  for (const kind of testDatabaseKinds()) {
    describe(`${title} [${kind.name}]`, () => {
      let server: TestServer | undefined;
      beforeAll(async () => {
        server = await startTestServer(kind, env);
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
