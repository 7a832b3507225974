import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tools } from '../../tools/index.js';
import { SERVER_ERROR_MESSAGE, ServiceError } from '../../src/core/errors.js';
import { listPlatforms } from '../../src/core/platforms.js';
import { createLogger } from '../../src/observability/logger.js';
import { buildMcpServer } from '../../src/mcp/server.js';
import { type AnyTool, MAX_LIST_LINKS, type ToolHints, type ToolServices } from '../../tools/define-tool.js';
import { toolFailure } from '../../src/mcp/tool-result.js';

const TOOLS_DIR = fileURLToPath(new URL('../../tools/', import.meta.url));
const README = fileURLToPath(new URL('../../README.md', import.meta.url));
// index.ts is the registry and define-tool.ts the type every tool file uses; every other file is one tool.
const toolFiles = readdirSync(TOOLS_DIR).filter((f) => f.endsWith('.ts') && f !== 'index.ts' && f !== 'define-tool.ts');

function isTool(value: unknown): value is AnyTool {
  return typeof value === 'object' && value !== null && 'name' in value && 'handle' in value && 'inputSchema' in value;
}

/**
 * The hints each tool must declare, as [readOnly, destructive, idempotent, openWorld]: changing one here is a
 * decision a reviewer sees. The rules are ToolHints' (tools/define-tool.ts); the reason for a case that is not
 * obvious sits beside the tool's annotations.
 */
const HINTS: Record<string, [boolean, boolean, boolean, boolean]> = {
  // Reads. preview_content's anonymous checks of the media addresses a post names act on nobody: closed world.
  get_content: [true, false, true, false],
  list_contents: [true, false, true, false],
  preview_content: [true, false, true, false],
  list_platforms: [true, false, true, false],
  list_brands: [true, false, true, false],
  get_queue: [true, false, true, false],
  list_connections: [true, false, true, false],
  // Read from the network at each call, with the user's connection.
  list_publish_targets: [true, false, true, true],
  list_webhooks: [true, false, true, false],
  list_deliveries: [true, false, true, false],
  list_media: [true, false, true, false],
  verify_webhook_signature: [true, false, true, false],
  get_usage: [true, false, true, false],
  get_wallet: [true, false, true, false],
  get_wallet_price: [true, false, true, false],
  list_wallet_offers: [true, false, true, false],
  get_audit_log: [true, false, true, false],
  list_pending_approvals: [true, false, true, false],
  // Approvals: submitting moves a draft into review and keeps every field (a second submit changes nothing);
  // approving publishes (open world) and a second approval is refused; a request for changes adds a comment.
  submit_for_approval: [false, false, true, false],
  approve_content: [false, false, false, true],
  request_changes: [false, false, false, false],
  // Publishing: to the networks, so open world; publish_content_now publishes once whatever the repeats, and gives
  // up the time the content was scheduled for (destructive); a retry only adds attempts.
  publish_content: [false, false, false, true],
  publish_content_now: [false, true, true, true],
  retry_failed_targets: [false, false, false, true],
  // Edits overwrite what was stored: destructive. update_content can schedule a draft (open world) and queue: true
  // moves on; a new webhook url points events at an outside receiver.
  update_content: [false, true, false, true],
  update_brand: [false, true, true, false],
  update_webhook: [false, true, true, true],
  // Cannot be undone, or replaces what the call does not name.
  cancel_content: [false, true, true, false],
  delete_webhook: [false, true, true, false],
  set_queue: [false, true, true, false],
  // Creations: each call makes a new object.
  create_brand: [false, false, false, false],
  add_sandbox_connection: [false, false, false, false],
  start_connection_oauth: [false, false, false, true],
  // The new place overwrites the current one; the same choice twice leaves what the first left; the board is
  // checked with the network.
  choose_publish_target: [false, true, true, true],
  create_webhook: [false, false, false, true],
  // An anonymous download of the address the user named: closed world.
  import_media_from_url: [false, false, false, false],
  // Sends: each call makes a new attempt to an outside receiver.
  send_webhook_test: [false, false, false, true],
  redeliver_delivery: [false, false, false, true],
};

/**
 * The consequences of the hint rule (tools/define-tool.ts, ToolHints) that do not depend on reading a tool's
 * code: which calls overwrite or remove (by their verb), and whom outside the service each open-world call acts
 * on. The table above must agree with them.
 */
const OVERWRITING_VERBS = /^(update|set|choose|cancel|delete)_/;
/** Overwrites beyond its verb: publish_content_now gives up the time the content was scheduled for. */
const ALSO_OVERWRITES = new Set(['publish_content_now']);
/** Reads that change nothing anywhere. */
const READING_VERBS = /^(get|list|preview|verify)_/;
/** Open world: who outside the service the call, or the work it starts, acts on for the user. */
const ACTS_OUTSIDE: Record<string, 'networks (publishing)' | 'a network, with the user\'s connection' | 'a webhook receiver'> = {
  publish_content: 'networks (publishing)',
  publish_content_now: 'networks (publishing)',
  retry_failed_targets: 'networks (publishing)',
  approve_content: 'networks (publishing)',
  update_content: 'networks (publishing)',
  list_publish_targets: "a network, with the user's connection",
  choose_publish_target: "a network, with the user's connection",
  start_connection_oauth: "a network, with the user's connection",
  create_webhook: 'a webhook receiver',
  update_webhook: 'a webhook receiver',
  send_webhook_test: 'a webhook receiver',
  redeliver_delivery: 'a webhook receiver',
};

/** Tools that publish to the networks: their descriptions say "Publishes to the networks". */
const PUBLISHES = new Set(['publish_content', 'publish_content_now', 'retry_failed_targets', 'approve_content']);

/** Tools that spend credits or plan meters: their descriptions say "Spends"; every other tool says "Free:". */
const SPENDS = new Set([
  'publish_content',
  'publish_content_now',
  'retry_failed_targets',
  'approve_content',
  'create_brand',
  'add_sandbox_connection',
  'start_connection_oauth',
  'create_webhook',
  'import_media_from_url',
]);

const AT = '2026-11-24T14:00:00.000Z';
const CONTENT_ID = '3f1c2a9e-8b7d-4c6e-9a5f-1d2e3f4a5b6c';
const JOB = { job_id: 'job_1', platform_slug: 'instagram', connection_id: 'conn_1', status: 'scheduled' };
const FULL_JOB = {
  ...JOB,
  status: 'failed',
  error_code: 'quota_exceeded',
  error_message: 'The network refused: daily quota.',
  external_post_url: null,
  notice: null,
  previous_status: null,
  attempts: 1,
  created_at: AT,
  updated_at: AT,
  published_at: null,
};
const WHEN = { publish_at: AT, time_zone: 'America/New_York', local_publish_at: '2026-11-24T09:00', queued: false };
const CONTENT = {
  content_id: CONTENT_ID,
  brand_id: 'brand_1',
  content_type: 'text',
  status: 'scheduled',
  target_platforms: ['instagram', 'threads'],
  ...WHEN,
  text: 'Fresh bread at nine.',
  title: null,
  thread: null,
  media: [],
  overrides: { threads: { text: 'Fresh bread at nine, still warm.' } },
  targets: [
    { platform_slug: 'instagram', text: 'Fresh bread at nine.', title: null, own_text: false, own_title: false },
    { platform_slug: 'threads', text: 'Fresh bread at nine, still warm.', title: null, own_text: true, own_title: false },
  ],
  created_at: AT,
  updated_at: AT,
  completed_at: null,
  approval_overdue: false,
  jobs: [FULL_JOB, { ...FULL_JOB, job_id: 'job_2', platform_slug: 'threads', status: 'published', error_code: null, error_message: null }],
};
const BRAND = { id: 'brand_1', name: 'Corner Bakery', approval_roles: null, created_at: AT, updated_at: AT };
const QUEUE = {
  brand_id: 'brand_1',
  time_zone: 'America/New_York',
  slots: [{ days: ['mon', 'wed'], time: '09:00' }],
  next_slots: [{ at: '2026-11-25T09:00:00-05:00', local_date: '2026-11-25', local_time: '09:00' }],
};
const CONNECTION = { id: 'conn_1', brand_id: 'brand_1', platform_slug: 'threads', mode: 'sandbox', name: '@bakery', status: 'active', status_reason: null, created_at: AT, updated_at: AT };
const WEBHOOK = { id: 'wh_1', url: 'https://hooks.example.com/publisher', description: '', enabled_events: ['content.published', 'content.failed'], active: true, created_at: AT, updated_at: AT };
const DELIVERY = { id: 'del_1', webhook_id: 'wh_1', event_id: 'evt_1', event_type: 'content.published', status: 'pending', attempt_count: 0, next_attempt_at: AT, created_at: AT, delivered_at: null, attempts: [], test: true };
const MEDIA = { id: 'media_1', content_type: 'image/jpeg', size_bytes: 482_113, created_at: AT, url: 'https://publisher.example/media/media_1?sig=x', used_by: [{ content_id: CONTENT_ID, status: 'scheduled' }] };

/** One plausible output per tool (each is checked against the tool's output schema before use). */
const SAMPLES: Record<string, Record<string, unknown>> = {
  publish_content: { content_id: CONTENT_ID, status: 'scheduled', ...WHEN, created_at: AT, jobs: [JOB, { ...JOB, job_id: 'job_2', platform_slug: 'threads' }] },
  preview_content: {
    dry_run: true,
    content_type: 'text',
    jobs: [{ platform_slug: 'threads', connection_id: 'conn_1', connection_mode: 'sandbox', text: 'Hi', title: null, thread: null }],
    meters: [{ meter: 'publicacoes', used: 0, consumes: 1, limit: 100 }],
  },
  update_content: { ...CONTENT, kept_overrides: [{ platform_slug: 'threads', fields: ['text'] }] },
  cancel_content: { ...CONTENT, status: 'canceled' },
  publish_content_now: { ...CONTENT, status: 'publishing' },
  retry_failed_targets: {
    content_id: CONTENT_ID,
    status: 'publishing',
    requeued: [{ ...JOB, status: 'queued' }],
    skipped: [{ job_id: 'job_2', platform_slug: 'threads', connection_id: 'conn_2', connection_status: 'expired', reason: 'connection_not_active', message: 'The connection conn_2 has expired: reconnect it, then retry.' }],
  },
  get_content: CONTENT,
  submit_for_approval: { ...CONTENT, status: 'pending_approval', jobs: [] },
  list_pending_approvals: { data: [{ ...CONTENT, status: 'pending_approval', jobs: [], approval_overdue: true }] },
  approve_content: CONTENT,
  request_changes: { ...CONTENT, status: 'changes_requested', jobs: [] },
  list_contents: { data: [CONTENT, { ...CONTENT, status: 'draft' }], next_cursor: 'cursor_2' },
  list_platforms: listPlatforms((slug) => slug === 'threads'),
  list_brands: { data: [BRAND, { ...BRAND, id: 'brand_2', name: 'Harbour Café' }] },
  create_brand: BRAND,
  update_brand: BRAND,
  get_queue: QUEUE,
  set_queue: QUEUE,
  list_connections: { data: [CONNECTION, { ...CONNECTION, id: 'conn_2', status: 'expired', mode: 'live' }] },
  add_sandbox_connection: CONNECTION,
  list_publish_targets: { data: [{ id: '5001', name: 'Recipes', current: true }, { id: '5002', name: 'Travel', current: false }] },
  choose_publish_target: { ...CONNECTION, platform_slug: 'pinterest', mode: 'live', name: 'acme · Travel' },
  start_connection_oauth: { authorization_url: 'https://threads.example/oauth/authorize?state=st_1', state: 'st_1', expires_at: AT },
  create_webhook: { ...WEBHOOK, secret: 'whsec_3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f0a1c3e5b7d' },
  list_webhooks: { data: [WEBHOOK, { ...WEBHOOK, id: 'wh_2', active: false }] },
  update_webhook: { ...WEBHOOK, active: false },
  delete_webhook: { webhook_id: 'wh_1', deleted: true },
  send_webhook_test: DELIVERY,
  list_deliveries: { data: [DELIVERY, { ...DELIVERY, id: 'del_2', status: 'dead' }], next_cursor: null },
  list_media: { data: [MEDIA], next_cursor: null },
  import_media_from_url: { ...MEDIA, used_by: [] },
  redeliver_delivery: { ...DELIVERY, status: 'dead', attempt_count: 6 },
  verify_webhook_signature: { valid: false, checks: { signature_format: true, timestamp_within_tolerance: true, hmac_matches: false }, reason: 'hmac_matches: the HMAC differs' },
  get_usage: { plan: 'default', cycle_end: AT, meters: [{ meter: 'publicacoes', kind: 'cycle', limit: 100, used: 3, cycle_end: AT }, { meter: 'brands', kind: 'stock', limit: 3, used: 1, cycle_end: null }] },
  get_wallet: { saldo: 12, lotes: [{ id: 'lote_1', amount: 12, remaining: 12, source: 'grant', created_at: AT, expires_at: null, expired: false }], ledger: { data: [], next_cursor: null } },
  get_wallet_price: { operacao: 'publicacao', preco_unitario: 2, quantidade: 3, custo_estimado: 6, saldo_disponivel: 12, coberto_pelo_plano: false },
  list_wallet_offers: { data: [{ id: 'offer_1', credits: 100, price: 10, currency: 'BRL', payment_url: 'https://pay.example/checkout?o=offer_1' }] },
  get_audit_log: {
    data: [
      {
        id: 'aud_1',
        occurred_at: AT,
        action: 'brand.created',
        actor: { type: 'api_key', id: 'key_1', label: 'first key (svc_live_abcd…)', role: 'owner' },
        via: 'mcp',
        target: { type: 'brand', id: 'brand_1', label: 'Bakery' },
        details: null,
        ip: '127.0.0.1',
        user_agent: 'claude-ai',
        request_id: 'req_1',
      },
    ],
    next_cursor: null,
  },
};

/** Dashboard paths the links may use (a route of src/dashboard/pages, `:x` for an id), plus an optional fragment. */
const DASHBOARD_PAGES = [/^\/dashboard\/contents\/[^/#]+$/, /^\/dashboard\/brands(#brand-[^/#]+)?$/, /^\/dashboard\/brands\/[^/#]+\/queue$/, /^\/dashboard\/webhooks\/[^/#]+$/, /^\/dashboard\/deliveries\/[^/#]+$/, /^\/dashboard\/media$/, /^\/dashboard\/wallet$/, /^\/dashboard\/approvals$/];

/** The part of a tool's JSON Schema the description walk reads. */
interface JsonSchemaNode {
  description?: unknown;
  properties?: Record<string, JsonSchemaNode>;
  items?: JsonSchemaNode;
  anyOf?: JsonSchemaNode[];
  oneOf?: JsonSchemaNode[];
  allOf?: JsonSchemaNode[];
}

/** The tools as a client sees them: tools/list over an in-memory connection to the real server, for an owner (who sees every tool). */
async function listedTools() {
  const server = buildMcpServer({
    principal: () => Promise.resolve({ kind: 'api_key', workspaceId: 'ws_registry', keyId: 'key_registry', role: 'owner', brandIds: null }),
    services: {} as ToolServices,
    log: createLogger('silent'),
    requestId: () => 'req_test',
    baseUrl: 'http://localhost:3000',
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'registry-test', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

describe('MCP tool registry (tools/index.ts)', () => {
  it('lists exactly one tool per file in tools/, named after its file', async () => {
    const fromFiles: AnyTool[] = [];
    for (const file of toolFiles) {
      const exported = Object.values(await import(pathToFileURL(join(TOOLS_DIR, file)).href) as Record<string, unknown>).filter(isTool);
      expect(exported, `${file} exports one tool`).toHaveLength(1);
      const tool = exported[0]!;
      expect(tool.name).toBe(basename(file, '.ts').replace(/-/g, '_'));
      fromFiles.push(tool);
    }
    expect(new Set(tools)).toEqual(new Set(fromFiles));
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
  });

  it("README.md's MCP section names exactly the tools of the registry", () => {
    const readme = readFileSync(README, 'utf8');
    // The section from its heading to the next `## `; its tool list runs from "Tools:" to the dash that ends it.
    const section = /^## AI assistants: MCP and OAuth\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
    expect(section, 'README.md has the "## AI assistants: MCP and OAuth" section').toBeDefined();
    const list = /Tools:([\s\S]*?) — /.exec(section ?? '')?.[1];
    expect(list, 'the MCP section lists the tools after "Tools:"').toBeDefined();
    const named = [...(list ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    expect(named.sort()).toEqual(tools.map((t) => t.name).sort());
  });

  describe.each(tools.map((t) => [t.name, t] as const))('%s', (_name, tool) => {
    it('has a snake_case verb_noun name', () => {
      expect(tool.name).toMatch(/^[a-z]+(_[a-z]+)+$/);
    });

    it('states all four annotations as booleans, as the table of expected hints says', () => {
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof tool.annotations[hint], hint).toBe('boolean');
      }
      // A read-only tool cannot be destructive (MCP: destructiveHint is meaningful only when not read-only).
      if (tool.annotations.readOnlyHint) expect(tool.annotations.destructiveHint).toBe(false);
      const [readOnlyHint, destructiveHint, idempotentHint, openWorldHint] = HINTS[tool.name] ?? [];
      expect(tool.annotations).toEqual({ readOnlyHint, destructiveHint, idempotentHint, openWorldHint } satisfies Partial<ToolHints>);
    });

    it('follows the hint rule: destructive when it overwrites or removes, read-only when it only reads, open world when it acts outside for the user', () => {
      expect(tool.annotations.destructiveHint, 'destructive').toBe(OVERWRITING_VERBS.test(tool.name) || ALSO_OVERWRITES.has(tool.name));
      expect(tool.annotations.readOnlyHint, 'read-only').toBe(READING_VERBS.test(tool.name));
      expect(tool.annotations.openWorldHint, 'open world').toBe(tool.name in ACTS_OUTSIDE);
      if (PUBLISHES.has(tool.name)) expect(ACTS_OUTSIDE[tool.name]).toBe('networks (publishing)');
    });

    it('says in fixed words whether it publishes, and whether it spends or is free', () => {
      expect(tool.description.includes('Publishes to the networks'), 'publishes').toBe(PUBLISHES.has(tool.name));
      expect(/\bSpends\b/.test(tool.description), 'Spends').toBe(SPENDS.has(tool.name));
      expect(tool.description.includes('Free:'), 'Free:').toBe(!SPENDS.has(tool.name));
      if (PUBLISHES.has(tool.name) || SPENDS.has(tool.name)) {
        // It hands back a handle and never waits on a network: a client may cut a call at 60 s.
        expect(tool.description).toContain('Returns at once');
        const handles = Object.keys(tool.outputSchema.shape).filter((k) => ['id', 'content_id', 'state'].includes(k));
        expect(handles, 'an id to follow it with').not.toEqual([]);
      }
    });

    it('summarises a sample output in one or two short sentences, and links only to dashboard pages', () => {
      const sample = SAMPLES[tool.name];
      expect(sample, 'a sample output in SAMPLES').toBeDefined();
      const output = tool.outputSchema.parse(sample);
      const summary = tool.summary(output);
      expect(summary.trim().length).toBeGreaterThan(10);
      expect(summary.length).toBeLessThanOrEqual(300);
      expect(summary).not.toContain('\n');
      expect(summary.split(/[.;:!?](?:\s|$)/).filter((s) => s.trim() !== '').length, summary).toBeLessThanOrEqual(4);
      expect(summary).toMatch(/[.!]$/);
      expect(summary, 'a secret stays in the JSON').not.toContain('whsec_');
      for (const link of tool.links?.(output) ?? []) {
        expect(DASHBOARD_PAGES.some((page) => page.test(link.path)), link.path).toBe(true);
        expect(link.name.length).toBeGreaterThan(0);
      }
      expect((tool.links?.(output) ?? []).length).toBeLessThanOrEqual(MAX_LIST_LINKS);
      // A long list still links at most MAX_LIST_LINKS of its items.
      const items = (sample as { data?: unknown }).data;
      if (Array.isArray(items) && items.length > 0) {
        const many = tool.outputSchema.parse({ ...sample, data: Array.from({ length: 25 }, () => items[0]) });
        expect((tool.links?.(many) ?? []).length).toBeLessThanOrEqual(MAX_LIST_LINKS);
        expect(tool.summary(many)).toMatch(/25/);
      }
    });

    it('has a title and a description written for a model', () => {
      expect(tool.title.trim().length).toBeGreaterThan(0);
      expect(tool.description.length).toBeGreaterThanOrEqual(60);
    });

    it('takes a zod object at the root and declares a zod object output', () => {
      expect(tool.inputSchema).toBeInstanceOf(z.ZodObject);
      expect(tool.outputSchema).toBeInstanceOf(z.ZodObject);
    });
  });

  it('describes every input property at its own top level, at any depth, as tools/list gives it', async () => {
    const listed = await listedTools();
    const undescribed: string[] = [];
    const walk = (schema: JsonSchemaNode, path: string): void => {
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        // The property's own description: one inside an anyOf branch (a nullable field) is not shown by clients
        // that read only the top of each property.
        if (typeof property.description !== 'string' || property.description.trim() === '') undescribed.push(`${path}.${name}`);
        walk(property, `${path}.${name}`);
      }
      if (schema.items !== undefined) walk(schema.items, `${path}[]`);
      for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) walk(branch, path);
    };
    for (const tool of listed) walk(tool.inputSchema as JsonSchemaNode, tool.name);
    expect(undescribed).toEqual([]);
    // The walk sees what it must: a nullable edit field and a nested media item.
    const update = listed.find((t) => t.name === 'update_content')?.inputSchema as JsonSchemaNode | undefined;
    expect(update?.properties?.text?.anyOf).toBeDefined();
    expect(update?.properties?.text?.description).toMatch(/null clears it/);
  });

  it('renders every schema as JSON Schema with type "object" at the root (no root $ref or union)', async () => {
    const listed = await listedTools();
    expect(listed).toHaveLength(tools.length);
    for (const tool of listed) {
      for (const schema of [tool.inputSchema, tool.outputSchema]) {
        expect(schema, tool.name).toMatchObject({ type: 'object' });
        expect(schema, tool.name).not.toHaveProperty('$ref');
        expect(schema, tool.name).not.toHaveProperty('anyOf');
      }
    }
  });
});

describe('tool results (src/mcp/tool-result.ts)', () => {
  function capture() {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    return { log: createLogger('error', sink), lines };
  }

  it('a ServiceError becomes an isError result with the REST body as its only text, never as structuredContent', () => {
    const { log } = capture();
    const err = new ServiceError('limit_reached', 'The plan is full.', { meter: 'publicacoes', limit: 1, used: 1, resolve: 'upgrade' });
    const result = toolFailure(err, 'req_abc12345', log);
    const body = { meter: 'publicacoes', limit: 1, used: 1, resolve: 'upgrade', error: 'limit_reached', message: 'The plan is full.', request_id: 'req_abc12345' };
    // structuredContent must match the tool's outputSchema, which an error body never does (SDK v1 and the
    // Inspector reject it even on isError results): see test/mcp/clients.test.ts for every tool through them.
    expect(result).toEqual({ isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] });
    expect(result).not.toHaveProperty('structuredContent');
  });

  it('an unknown exception becomes server_error with the fixed message; the stack is logged, never returned', () => {
    const { log, lines } = capture();
    const result = toolFailure(new Error('database exploded at /secret/path'), 'req_abc12345', log);
    const text = result.content[0];
    expect(JSON.parse(text?.type === 'text' ? text.text : 'null')).toEqual({ error: 'server_error', message: SERVER_ERROR_MESSAGE, request_id: 'req_abc12345' });
    expect(JSON.stringify(result)).not.toContain('exploded');
    expect(lines.join('')).toContain('database exploded');
  });
});
