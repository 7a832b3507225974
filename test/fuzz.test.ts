/**
 * OWASP API4/API8 fuzzing of every operation of the served /openapi.yaml that takes a JSON body, query or path
 * parameters (the OAuth protocol endpoints, /mcp and the payment callback excepted): schema-generated inputs and
 * mutations of valid ones, judged by the fuzzer in test/support/fuzz/ (no 5xx, spec error bodies, documented
 * statuses, database unchanged by rejected requests, server up).
 *
 * FUZZ_RUNS (default 100) generated cases per operation; FUZZ_RUNS_PG for the PostgreSQL run (default: half, 50:
 * the same routes and checks, where each case costs about twice as much, inside the suite's time budget). The
 * default fell from 200 when the operations grew past fifty, and from 150 when a clean CI run on a slow two-core
 * machine came to 15 minutes with this file its longest (120 s): the suite must stay well inside CI's 15 minutes,
 * and every run draws new cases (no fixed seed), so coverage accumulates across runs;
 * FUZZ_SEED to replay a run; FUZZ_SLOW=0 skips the ~1 MB / 100,000-level / 16 KB-header cases.
 * The long run: FUZZ_RUNS=10000 npx vitest run test/fuzz.test.ts
 */
import fc from 'fast-check';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.js';
import { idempotencyKeySchema } from '../src/core/idempotency/idempotency.schema.js';
import { createLogger } from '../src/observability/logger.js';
import { testDatabaseKinds } from './support/databases.js';
import { ALL_PLATFORMS, brandWithConnections } from './support/factories.js';
import { describeEachDb, startTestServer, type TestServer } from './support/server.js';
import { type Hints, validCaseArbitrary } from './support/fuzz/arbitraries.js';
import type { CaseContext, FuzzCase } from './support/fuzz/case.js';
import { errorCodesOf, type Operation, operationsTakingInput } from './support/fuzz/document.js';
import type { JudgeContext } from './support/fuzz/judge.js';
import { caseArbitrary } from './support/fuzz/mutations.js';
import { formatAnswers, formatFailures, fuzzOperation } from './support/fuzz/runner.js';
import type { Answer } from './support/fuzz/send.js';
import { slowCases } from './support/fuzz/slow-cases.js';
import { type OpenApiDocument, parseOpenApi } from './support/openapi.js';
import { addPerson } from './support/person.js';

function count(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}

const RUNS = count('FUZZ_RUNS', 100);
const PG_RUNS = count('FUZZ_RUNS_PG', Math.max(1, Math.floor(RUNS / 2)));
const SEED = process.env.FUZZ_SEED === undefined || process.env.FUZZ_SEED === '' ? undefined : Number(process.env.FUZZ_SEED);
if (SEED !== undefined && !Number.isSafeInteger(SEED)) throw new Error('FUZZ_SEED must be an integer');
const SLOW = process.env.FUZZ_SLOW !== '0';

/** Library-owned protocol endpoints, the MCP door and the signed payment callback are out of scope. */
function excluded(path: string): boolean {
  return path.startsWith('/api/oauth/mcp') || path.startsWith('/.well-known/') || path === '/mcp' || path === '/v1/payments/callback';
}

/** The served document, read once at load so that each operation gets its own test. */
async function servedDocument(): Promise<{ doc: OpenApiDocument }> {
  const kind = testDatabaseKinds()[0];
  if (!kind) throw new Error('no test database');
  const server = await startTestServer(kind, {}, { workers: false });
  try {
    return { doc: parseOpenApi(await (await fetch(`${server.url}/openapi.yaml`)).text()) };
  } finally {
    await server.stop();
  }
}

/**
 * The server's error log, kept by request id, so a 5xx finding says what failed inside (exception and the first
 * frame of our code) rather than only the opaque server_error body.
 */
const serverErrors = new Map<string, string>();
const errorLog = new Writable({
  write(chunk: Buffer, _encoding, done) {
    try {
      const line = JSON.parse(chunk.toString('utf8')) as { request_id?: string; err?: { type?: string; message?: string; stack?: string } };
      if (line.request_id !== undefined && line.err !== undefined) {
        const frame = (line.err.stack ?? '').split('\n').find((l) => /\/(src|db|oauth)\//.test(l) && !l.includes('node_modules'));
        const where = frame === undefined ? '' : ` (${frame.trim().replace(/^at /, '').replace(/.*\/work\/main\//, '').replace(/^.*\((.*)\)$/, '$1')})`;
        serverErrors.set(line.request_id, `${line.err.type ?? 'Error'}: ${(line.err.message ?? '').split('\n')[0]}${where}`);
      }
    } catch {
      // not a JSON line
    }
    done();
  },
});

function explain(requestId: string): string | undefined {
  const why = serverErrors.get(requestId);
  serverErrors.delete(requestId);
  return why;
}

/** Findings of every operation, by signature, for one summary at the end. */
const findings = new Map<string, Set<string>>();

const served = await servedDocument();
const OPERATIONS = operationsTakingInput(served.doc, excluded);

/** Operations that take an Idempotency-Key: a rejection under a well-formed key is recorded, to be replayed. */
const IDEMPOTENT = ['createContent', 'updateContent', 'cancelContent', 'publishContentNow'];

/** Every path parameter the fuzzer knows real ids for; an unknown one would only ever get random values. */
const KNOWN_PATH_PARAMS = ['wsId', 'keyId', 'brandId', 'connId', 'contentId', 'whId', 'delId', 'clientId', 'platform', 'mediaId', 'memberId', 'invitationId'];

interface Fixtures {
  wsId: string;
  key: { id: string; secret: string };
  otherKey: string;
  brand: string;
  sideBrand: string;
  doomedBrand: string;
  otherBrand: string;
  /** Ids of every kind in the other workspace: a path that names them must answer 403/404, never the object. */
  otherIds: string[];
  connections: Record<string, string>;
  sideConnection: string;
  spareKey: string;
  mediaId: string;
  videoId: string;
  /** An upload no content names: the one the media delete may remove. */
  doomedMedia: string;
  platforms: { slug: string; content_types: string[]; title_required: boolean }[];
  contents: string[];
  /** A scheduled and a draft content: what an edit can change. */
  waiting: string[];
  /** A scheduled content for the cancel, a draft for publish-now (each would end the other's). */
  toCancel: string;
  toPublish: string;
  webhook: string;
  doomedWebhook: string;
  delivery: string;
  client: string;
  doomedClient: string;
  /** A member whose role and brands the fuzzer may change, and one it may remove. */
  member: string;
  doomedMember: string;
  invitation: string;
  doomedInvitation: string;
}

async function must(server: TestServer, method: string, path: string, key: string, body: unknown, status: number): Promise<Record<string, unknown>> {
  const res = await server.request(method, path, { key, body });
  if (res.status !== status) throw new Error(`fixture ${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

/** A workspace with one of everything, plus spares for the destructive operations, and a second workspace. */
async function makeFixtures(server: TestServer): Promise<Fixtures> {
  const { ws, brandId, connections } = await brandWithConnections(server, ALL_PLATFORMS, await server.workspace('fuzz'));
  const base = `/api/v1/workspaces/${ws.workspace_id}`;
  const k = ws.api_key;
  const other = await brandWithConnections(server, ['threads'], await server.workspace('other'));
  const ob = `/api/v1/workspaces/${other.ws.workspace_id}`;
  const ok = other.ws.api_key;
  const otherIds = [
    other.ws.workspace_id,
    other.ws.key_id,
    other.brandId,
    ...Object.values(other.connections),
    (await must(server, 'POST', `${ob}/webhooks`, ok, { url: 'https://hooks.invalid/other', enabled_events: ['content.failed'] }, 201)).id as string,
    (await must(server, 'POST', `${ob}/oauth-clients`, ok, { client_name: 'other', redirect_uris: ['https://app.invalid/cb'] }, 201)).client_id as string,
    (await must(server, 'POST', `${ob}/contents`, ok, { brand_id: other.brandId, target_platforms: ['threads'], content_type: 'text', text: 'theirs' }, 201)).content_id as string,
  ];
  const sideBrand = (await must(server, 'POST', `${base}/brands`, k, { name: 'side' }, 201)).id as string;
  const doomedBrand = (await must(server, 'POST', `${base}/brands`, k, { name: 'doomed' }, 201)).id as string;
  const sideConnection = (await must(server, 'POST', `${base}/brands/${sideBrand}/connections`, k, { platform_slug: 'threads', mode: 'sandbox', name: '@side' }, 201)).id as string;
  const spareKey = (await must(server, 'POST', `${base}/api-keys`, k, { name: 'spare' }, 201)).id as string;
  const upload = await fetch(`${server.url}${base}/media`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'image/png' }, body: new Uint8Array(64).fill(1) });
  const mediaId = ((await upload.json()) as { id: string }).id;
  const video = await fetch(`${server.url}${base}/media`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'video/mp4' }, body: new Uint8Array(256).fill(2) });
  const videoId = ((await video.json()) as { id: string }).id;
  const doomed = await fetch(`${server.url}${base}/media`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'image/png' }, body: new Uint8Array(32).fill(3) });
  const doomedMedia = ((await doomed.json()) as { id: string }).id;
  const platforms = (await must(server, 'GET', '/api/v1/platforms', k, undefined, 200)).data as Fixtures['platforms'];
  const webhook = (await must(server, 'POST', `${base}/webhooks`, k, { url: 'https://hooks.invalid/fuzz', enabled_events: ['content.published', 'content.failed'] }, 201)).id as string;
  const doomedWebhook = (await must(server, 'POST', `${base}/webhooks`, k, { url: 'https://hooks.invalid/doomed', enabled_events: ['content.failed'] }, 201)).id as string;
  const published = (await must(server, 'POST', `${base}/contents`, k, { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'hello' }, 201)).content_id as string;
  const failed = (await must(server, 'POST', `${base}/contents`, k, { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'fail', sandbox_outcomes: { threads: 'quota_exceeded' } }, 201)).content_id as string;
  await server.settle();
  const later = new Date(server.container.clock.now() + 30 * 86_400_000).toISOString();
  const scheduled = async (text: string) =>
    (await must(server, 'POST', `${base}/contents`, k, { brand_id: brandId, target_platforms: ['linkedin', 'facebook'], content_type: 'text', text, publish_at: later }, 201)).content_id as string;
  const draft = async (text: string) => (await must(server, 'POST', `${base}/contents`, k, { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text, draft: true }, 201)).content_id as string;
  const waiting = [await scheduled('later'), await draft('some day')];
  const toCancel = await scheduled('doomed');
  const toPublish = await draft('publish me');
  const deliveries = await must(server, 'GET', `${base}/webhooks/${webhook}/deliveries`, k, undefined, 200);
  const delivery = ((deliveries.data as { id: string }[])[0] ?? { id: 'del_none' }).id;
  const client = (await must(server, 'POST', `${base}/oauth-clients`, k, { client_name: 'fuzz', redirect_uris: ['https://app.invalid/cb'] }, 201)).client_id as string;
  const doomedClient = (await must(server, 'POST', `${base}/oauth-clients`, k, { client_name: 'doomed', redirect_uris: ['https://app.invalid/cb'] }, 201)).client_id as string;
  await addPerson(server, ws.workspace_id, 'fuzz-member@example.com', 'viewer');
  await addPerson(server, ws.workspace_id, 'fuzz-doomed@example.com', 'viewer');
  const members = (await must(server, 'GET', `${base}/members`, k, undefined, 200)).data as { id: string; email: string }[];
  const memberOf = (email: string) => members.find((m) => m.email === email)!.id;
  const invite = async (email: string) => (await must(server, 'POST', `${base}/invitations`, k, { email, role: 'viewer' }, 201)).id as string;
  return {
    member: memberOf('fuzz-member@example.com'),
    doomedMember: memberOf('fuzz-doomed@example.com'),
    invitation: await invite('fuzz-invited@example.com'),
    doomedInvitation: await invite('fuzz-uninvited@example.com'),
    wsId: ws.workspace_id,
    key: { id: ws.key_id, secret: k },
    otherKey: other.ws.api_key,
    brand: brandId,
    sideBrand,
    doomedBrand,
    otherBrand: other.brandId,
    otherIds,
    connections,
    sideConnection,
    spareKey,
    mediaId,
    videoId,
    doomedMedia,
    platforms,
    contents: [published, failed],
    waiting,
    toCancel,
    toPublish,
    webhook,
    doomedWebhook,
    delivery,
    client,
    doomedClient,
  };
}

/** Real ids per path parameter; destructive operations get spares so the others keep their objects. */
function idsFor(op: Operation, f: Fixtures): Record<string, readonly string[]> {
  const destructive = op.method === 'DELETE' || /\/(deactivate|oauth)$/.test(op.path);
  const brandWrites = op.method !== 'GET' && op.path.includes('{brandId}');
  return {
    wsId: [f.wsId],
    keyId: [f.spareKey],
    brandId: op.method === 'DELETE' ? [f.doomedBrand] : brandWrites ? [f.sideBrand] : [f.brand, f.sideBrand],
    connId: destructive ? [f.sideConnection] : [...Object.values(f.connections), f.sideConnection],
    contentId: op.id === 'updateContent' ? [...f.contents, ...f.waiting] : op.id === 'cancelContent' ? [...f.contents, f.toCancel] : op.id === 'publishContentNow' ? [...f.contents, f.toPublish] : f.contents,
    whId: op.method === 'DELETE' ? [f.doomedWebhook] : [f.webhook],
    delId: [f.delivery],
    clientId: op.method === 'DELETE' ? [f.doomedClient] : [f.client],
    platform: ALL_PLATFORMS,
    mediaId: op.method === 'DELETE' ? [f.doomedMedia] : [f.mediaId, f.videoId],
    memberId: op.method === 'DELETE' ? [f.doomedMember] : [f.member],
    invitationId: op.method === 'DELETE' ? [f.doomedInvitation] : [f.invitation],
  };
}

/**
 * Ids that are wrong in a path: the other workspace's (any kind), and this workspace's of other kinds. A
 * destructive operation never gets this workspace's ids of its own kind, so it cannot delete the shared fixtures.
 */
function foreignIdsFor(op: Operation, f: Fixtures): string[] {
  const own = [f.brand, f.sideBrand, f.doomedBrand, ...Object.values(f.connections), f.sideConnection, ...f.contents, ...f.waiting, f.toCancel, f.toPublish, f.webhook, f.doomedWebhook, f.delivery, f.client, f.doomedClient, f.spareKey, f.mediaId, f.videoId, f.doomedMedia, f.member, f.doomedMember, f.invitation, f.doomedInvitation];
  const target = op.pathParams.at(-1)?.name;
  const targetIds = target === undefined ? [] : (idsFor(op, f)[target] ?? []);
  // Content ids are UUIDs, without a kind prefix: they are all one kind.
  const kindOf = (id: string) => (/^[0-9a-f]{8}-[0-9a-f]{4}-/.test(id) ? 'content' : id.replace(/_[^_]*$/, ''));
  const kinds = new Set(targetIds.map(kindOf));
  const safe = op.method === 'GET' ? own : own.filter((id) => !kinds.has(kindOf(id)));
  return [...f.otherIds, ...safe, 'ws_other'];
}

/** Values the schema cannot tell: ids that exist, well-formed keys and signatures. */
function hintsFor(f: Fixtures): Hints {
  const connections = Object.values(f.connections);
  return {
    brand_id: fc.oneof({ weight: 5, arbitrary: fc.constant(f.brand) }, { weight: 1, arbitrary: fc.constantFrom(f.sideBrand, f.otherBrand, f.doomedBrand, 'brand_nope') }),
    target_platforms: fc.shuffledSubarray([...ALL_PLATFORMS], { minLength: 1 }),
    target_connections: fc.shuffledSubarray(connections, { minLength: 1, maxLength: 2 }),
    media_id: fc.constantFrom(f.mediaId, 'media_nope'),
    text: fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 40 }) }, { weight: 1, arbitrary: fc.string({ minLength: 480, maxLength: 700 }) }),
    'Idempotency-Key': fc.oneof(fc.uuid(), fc.stringMatching(/^[\x21-\x7e]{1,40}$/)),
    // Times around the fuzz clock (2026-01-05): future, local, past, too far ahead, in a spring-forward gap, or noise.
    publish_at: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom('2026-02-01T09:00:00Z', '2026-02-01T09:00:00-05:00', '2026-02-01T09:00', '2026-03-08T02:30', '2025-12-31T23:59:59Z', '2027-06-01T00:00:00Z') },
      { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    ),
    time_zone: fc.oneof({ weight: 3, arbitrary: fc.constantFrom('America/New_York', 'Europe/Berlin', 'UTC', 'Asia/Kolkata') }, { weight: 1, arbitrary: fc.string({ maxLength: 64 }) }),
    operacao: fc.constantFrom('publicacao', 'criacao_de_conteudo', 'inexistente'),
    signature_header: fc.oneof(fc.stringMatching(/^sha256=[0-9a-f]{64}$/), fc.string({ maxLength: 80 })),
    payload: fc.tuple(fc.integer({ min: 0, max: 2 ** 32 }), fc.json({ maxDepth: 2 })).map(([t, j]) => `${t}.${j}`),
  };
}

/** Content bodies that can pass every check: platforms that take the type, the media it needs, a title where required. */
function coherentContent(f: Fixtures): fc.Arbitrary<unknown> {
  const types = [...new Set(f.platforms.flatMap((p) => p.content_types))];
  return fc.constantFrom(...types).chain((type) => {
    const able = f.platforms.filter((p) => p.content_types.includes(type));
    return fc
      .record({
        targets: fc.shuffledSubarray(able, { minLength: 1 }),
        text: fc.string({ maxLength: 80 }),
        thread: fc.array(fc.string({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 4 }),
        modo: fc.constantFrom(undefined, 'plano', 'creditos', 'automatico'),
        split: fc.constantFrom(undefined, 'auto', 'off'),
        override: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
      })
      .map(({ targets, text, thread, modo, split, override }) => {
        const body: Record<string, unknown> = { brand_id: f.brand, target_platforms: targets.map((p) => p.slug), content_type: type, text };
        if (type === 'photo') body.media = [{ media_id: f.mediaId }];
        if (type === 'video' || type === 'reel') body.media = [{ media_id: f.videoId }];
        if (type === 'thread') body.thread = thread;
        if (targets.some((p) => p.title_required)) body.title = 'A title';
        if (modo !== undefined) body.modo = modo;
        if (split !== undefined) body.thread_split = split;
        if (override !== undefined && targets[0]) body.overrides = { [targets[0].slug]: { text: override } };
        return body;
      });
  });
}

/** Edits a waiting text content on linkedin and facebook can take: new text, a time, the queue, back to draft. */
function coherentEdits(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.string({ minLength: 1, maxLength: 80 }).filter((text) => text.trim() !== '').map((text) => ({ text })),
    fc.constantFrom<unknown>(
      { publish_at: '2026-02-01T09:00:00Z' },
      { publish_at: '2026-02-01T09:00', time_zone: 'Europe/Berlin' },
      { draft: true },
      { queue: true },
      { target_platforms: ['linkedin'], text: 'only here' },
      { title: null, overrides: { linkedin: { text: 'on linkedin' } } },
    ),
  );
}

describeEachDb(
  'fuzz',
  (server, kind) => {
    const runs = kind.name === 'postgres' ? PG_RUNS : RUNS;
    let f: Fixtures;
    let judgeContext: JudgeContext;
    let key: { id: string; secret: string };

    beforeAll(async () => {
      f = await makeFixtures(server());
      key = f.key;
      judgeContext = { conformance: await server().openapi(), errorCodes: errorCodesOf(served.doc) };
    });

    it('covers every operation that takes input, with real ids for every path parameter', async () => {
      const doc = parseOpenApi(await (await fetch(`${server().url}/openapi.yaml`)).text());
      expect(operationsTakingInput(doc, excluded).map((op) => op.id)).toEqual(OPERATIONS.map((op) => op.id));
      const params = new Set(OPERATIONS.flatMap((op) => op.pathParams.map((p) => p.name)));
      expect([...params].filter((p) => !KNOWN_PATH_PARAMS.includes(p))).toEqual([]);
      expect(OPERATIONS.map((op) => op.id)).toEqual(expect.arrayContaining(['createContent', 'createBrand', 'uploadMedia', 'verifyWebhookSignature', 'getWalletPrice']));
    });

    for (const op of OPERATIONS) {
      it(
        `${op.method} ${op.path} (${op.id})`,
        async () => {
          const s = server();
          const clock = s.container.clock as ManualClock;
          const ctx: CaseContext = {
            op,
            doc: served.doc,
            hints: hintsFor(f),
            ids: idsFor(op, f),
            foreignIds: foreignIdsFor(op, f),
            otherTenantIds: f.otherIds,
            foreignAuthorization: `Bearer ${f.otherKey}`,
            ...(op.id === 'createContent' ? { bodies: coherentContent(f) } : op.id === 'updateContent' ? { bodies: coherentEdits() } : {}),
          };
          const example = fc.sample(validCaseArbitrary(ctx), { numRuns: 1, seed: 42 })[0];
          if (!example) throw new Error('no example');
          const report = await fuzzOperation({
            baseUrl: s.url,
            db: s.container.db.kysely,
            op,
            cases: caseArbitrary(ctx),
            slow: SLOW ? slowCases(ctx, example) : [],
            numRuns: runs,
            seed: SEED,
            key: () => key.secret,
            judge: judgeContext,
            beforeCase: () => clock.advance(1),
            afterAnswer: async (_c: FuzzCase, a: Answer) => {
              // A valid `revoke_others: true` rotates the keys: carry on with the new one.
              if (op.id !== 'createApiKey' || a.status !== 201) return;
              const row = await s.container.db.kysely.selectFrom('api_keys').select('revoked_at').where('id', '=', key.id).executeTakeFirst();
              const created = a.json as { id: string; api_key: string };
              if (row?.revoked_at !== null) key = { id: created.id, secret: created.api_key };
            },
            explain,
            // Spec 4.3: with a well-formed Idempotency-Key the first outcome is stored and replayed, errors included
            // (the checks after the schema run under the key); that finished record is the only write a rejected
            // content creation, edit, cancel or publish-now may leave. A lock left in flight would still show (idempotency_in_flight).
            allowedChanges: (c: FuzzCase) => {
              const idempotencyKey = c.headers['idempotency-key']?.replace(/^[ \t]+|[ \t]+$/g, ''); // as fetch sends it
              return IDEMPOTENT.includes(op.id) && idempotencyKeySchema.safeParse(idempotencyKey).success ? ['idempotency_keys'] : [];
            },
          });
          console.info(formatAnswers(report));
          for (const failure of report.failures) {
            const signature = `[${kind.name}] ${failure.signature}`;
            findings.set(signature, (findings.get(signature) ?? new Set()).add(op.id));
          }
          if (report.failures.length > 0) throw new Error(formatFailures(report));
        },
        Math.max(60_000, runs * 100),
      );
    }
  },
  { RATE_LIMIT_PER_MINUTE: '100000000', OPEN_RATE_LIMIT_PER_MINUTE: '100000000' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 0, 5, 12)), workers: false, logger: createLogger('error', errorLog) }),
);

afterAll(() => {
  if (findings.size === 0) return;
  const lines = [...findings].sort().map(([signature, ops]) => `${signature}\n    ${[...ops].join(', ')}`);
  console.info(`Fuzz findings by signature (status, code, mutation family, server log):\n${lines.join('\n')}`);
});
