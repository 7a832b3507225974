import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { type TestDatabaseKind, testDatabaseKinds } from '../support/databases.js';
import { type ServiceProcess, startServiceProcess } from '../support/process.js';
import { type ApiResponse, checkedRequest, type RequestOptions, startTestServerOn, TEST_SECRET_KEY, type TestServer } from '../support/server.js';
import { overrides } from '../support/overrides.js';

/**
 * The concurrency harness: every state change may run twice at once, in two processes on PostgreSQL
 * (ARCHITECTURE.md, "many processes at scale"). On PostgreSQL a cluster is one in-process server plus one child
 * process (`src/main.ts`) on the same database, `SECRET_KEY`, `BASE_URL` and media folder; on SQLite (one
 * process by design) it is the in-process server alone. Requests are split between the processes by `split`.
 *
 * Neither process runs background workers on its own: the child is `SERVICE_ROLE=api` and the in-process server
 * starts without workers, so a test decides exactly when jobs and deliveries run (`drainJobs`, `drainDeliveries`)
 * and can put an attempt in flight while requests race it. Both processes use the real clock, so they agree on
 * time.
 */

/** A plan small enough to reach every stock meter with a handful of requests. */
export const TIGHT_PLAN = { brands: 3, connections: 4, media_storage: 1000, webhooks: 2, inspiration_library: 1, criacao_de_conteudos: 10_000, publicacoes: 10_000 };

/** A plan whose per-cycle `publicacoes` meter is reached with a handful of publications. */
export const FEW_POSTS_PLAN = { ...TIGHT_PLAN, publicacoes: 5 };

/** What both processes of a cluster are started with (besides database, secret, base URL and media folder). */
export const CLUSTER_ENV: Record<string, string> = {
  ...overrides({ SANDBOX_DELAY: '0ms' }),
  // Webhook receivers and media hosts of these tests listen on loopback.
  ALLOW_LOCAL_URLS: 'true',
  WEBHOOK_TIMEOUT: '5s',
  // Twenty requests queue on one counter row by design here, and the suite runs many files at once on two cores:
  // the default 5 s bounds on a lock wait and a pooled connection are for production traffic, not for that queue.
  DATABASE_LOCK_TIMEOUT: '30s',
  DATABASE_CONNECT_TIMEOUT: '30s',
  PLANS_JSON: JSON.stringify({ tight: TIGHT_PLAN, few_posts: FEW_POSTS_PLAN }),
  PRICES_JSON: JSON.stringify({ default: { publicacao: 1, criacao_de_conteudo: 1 } }),
};

/** One process's HTTP door. */
export interface Door {
  /** `in-process` or `child`, for assertion messages. */
  name: string;
  url: string;
  request<T = Record<string, unknown>>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
}

export class Cluster {
  constructor(
    readonly kind: TestDatabaseKind,
    /** The in-process server: its container reads the database and drives the workers. */
    readonly server: TestServer,
    readonly doors: Door[],
    private readonly child: ServiceProcess | undefined,
    /** The upload folder both processes share. */
    readonly mediaDir: string,
  ) {}

  /** How many processes serve the database (2 on PostgreSQL, 1 on SQLite). */
  get processes(): number {
    return this.doors.length;
  }

  /** The public base URL both processes share (the OAuth issuer is derived from it). */
  get baseUrl(): string {
    return this.server.service.baseUrl;
  }

  /**
   * Starts `n` calls at once and waits for all; call `i` goes through door `i % processes`, so the requests
   * alternate between the two processes.
   */
  split<T>(n: number, fn: (door: Door, i: number) => Promise<T>): Promise<T[]> {
    return Promise.all(Array.from({ length: n }, (_, i) => fn(this.doors[i % this.doors.length]!, i)));
  }

  workspace(name = 'Concurrency'): Promise<NewWorkspace> {
    return this.server.workspace(name);
  }

  /** Runs every due publishing job to its next state (the in-process publisher; the child has no workers). */
  drainJobs(): Promise<void> {
    return this.server.container.publisher.drain();
  }

  /** Makes every due webhook delivery attempt (the in-process dispatcher). */
  drainDeliveries(): Promise<void> {
    return this.server.container.dispatcher.drain();
  }

  /** The child's log output, for a failing assertion's message. */
  childOutput(): string {
    return this.child ? `${this.child.stdout()}\n${this.child.stderr()}` : '';
  }

  async stop(): Promise<void> {
    const code = await this.child?.stop();
    await this.server.stop();
    rmSync(this.mediaDir, { recursive: true, force: true });
    // The child is stopped with SIGTERM and must shut down cleanly; anything else hides a crash.
    if (this.child) expect(code, this.childOutput()).toBe(0);
  }
}

/** A door that checks every answer against the server's /openapi.yaml, as `TestServer.request` does. */
function door(name: string, url: string, server: TestServer): Door {
  return {
    name,
    url,
    request<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
      return checkedRequest<T>(url, () => server.openapi(), method, path, options, name);
    },
  };
}

/** Starts a cluster on a fresh database of `kind`: two processes on PostgreSQL, one on SQLite (its one serving process). */
export async function startCluster(kind: TestDatabaseKind, env: Record<string, string> = {}): Promise<Cluster> {
  const database = await kind.create();
  const mediaDir = mkdtempSync(join(tmpdir(), 'publisher-cluster-media-'));
  const shared = { ...CLUSTER_ENV, MEDIA_DIR: mediaDir, ...env };
  // The in-process server migrates the database first; the child then finds it ready.
  const server = await startTestServerOn(database, shared, { workers: false });
  const doors = [door('in-process', server.url, server)];
  let child: ServiceProcess | undefined;
  if (kind.name === 'postgres') {
    try {
      child = await startServiceProcess({
        ...shared,
        DATABASE_URL: database.url,
        SECRET_KEY: TEST_SECRET_KEY,
        // Same issuer and resource for OAuth, whichever process answers.
        BASE_URL: server.service.baseUrl,
        SERVICE_ROLE: 'api',
        LOG_LEVEL: 'warn',
      });
    } catch (err) {
      await server.stop();
      rmSync(mediaDir, { recursive: true, force: true });
      throw err;
    }
    doors.push(door('child', child.url, server));
  }
  return new Cluster(kind, server, doors, child, mediaDir);
}

/**
 * Runs `body` once per test database: on SQLite with one process, and, when TEST_DATABASE_URL is set, on
 * PostgreSQL with two processes sharing the database (skipped cleanly otherwise, as `describeEachDb` does).
 */
export function describeCluster(title: string, body: (cluster: () => Cluster) => void, env: Record<string, string> = {}): void {
  for (const kind of testDatabaseKinds()) {
    const label = kind.name === 'postgres' ? 'postgres, 2 processes' : 'sqlite, 1 process';
    describe(`${title} [${label}]`, () => {
      let cluster: Cluster | undefined;
      beforeAll(async () => {
        cluster = await startCluster(kind, env);
      });
      afterAll(async () => {
        await cluster?.stop();
      });
      body(() => {
        if (!cluster) throw new Error('cluster not started');
        return cluster;
      });
    });
  }
}

/** Counts answers by HTTP status, e.g. `{201: 3, 403: 17}`: one readable line when an invariant breaks. */
export function statuses(results: { status: number }[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}
