import {
  type CallToolResult,
  type Icon,
  type Implementation,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { validationError } from '../core/errors.js';
import { allows, authorize } from '../core/permissions/authorize.js';
import { tools as registry } from '../../tools/index.js';
import type { Principal } from '../core/principal.js';
import type { Logger } from '../observability/logger.js';
import type { AnyTool, ToolServices } from '../../tools/define-tool.js';
import { toolFailure, toolSuccess } from './tool-result.js';

const SERVER_NAME = 'multi-network-publisher';
const SERVER_VERSION = '0.1.0';

const INSTRUCTIONS =
  'Publishes content to Instagram, Facebook Pages, Threads, YouTube and LinkedIn for one workspace (the one the ' +
  'credential belongs to). Typical flow: list_brands and list_connections to pick a brand, preview_content to check ' +
  'a post against every platform limit for free, publish_content with an idempotency_key, then get_content until ' +
  'every job is published or failed. To post later, give publish_content a local publish_at with the user\'s IANA ' +
  'time_zone (or queue: true for the brand\'s next queue slot, or draft: true); list_contents with status scheduled ' +
  'and from/to is the calendar; update_content, cancel_content and publish_content_now change a waiting post. Errors come back as isError results whose text is JSON with `error` (a stable code), ' +
  '`message` and `request_id`. Only the tools the credential\'s role may use are listed; a call its role or brands refuse ' +
  'answers `forbidden` with `permission` naming what is missing: ask the person to do it, or to grant a role that may.';

/**
 * The server's icons, served by the dashboard's asset route: a PNG first because some clients draw only raster
 * icons fetched over http(s), not data URIs or SVG.
 */
function icons(baseUrl: string): Icon[] {
  return [
    { src: `${baseUrl}/dashboard/assets/icon.png`, mimeType: 'image/png', sizes: ['256x256'] },
    { src: `${baseUrl}/dashboard/assets/favicon.svg`, mimeType: 'image/svg+xml', sizes: ['any'] },
  ];
}

function serverInfo(baseUrl: string): Implementation {
  return { name: SERVER_NAME, version: SERVER_VERSION, title: 'Multi-network publisher', websiteUrl: `${baseUrl}/docs`, icons: icons(baseUrl) };
}

/** Who calls and where the tools report; one per MCP server instance. */
export interface McpScope {
  /**
   * The caller, asked once per tool call. The HTTP door passes the principal its auth layer already resolved;
   * the stdio entry re-checks its API key each time, so a revoked key stops working at once (spec 3.1).
   */
  principal(): Promise<Principal>;
  services: ToolServices;
  log: Logger;
  /** The id quoted in error bodies: the HTTP request's id, or a fresh one per call on stdio. */
  requestId(): string;
  /** Public base URL: icons and the links in tool results point there. */
  baseUrl: string;
  /**
   * The protocol revision the request speaks when the server instance cannot know it from a handshake (a
   * stateless HTTP request after `initialize`: its `MCP-Protocol-Version` header).
   */
  protocolVersion?: string;
}

/** The first revision with `resource_link` content (MCP 2025-06-18 changelog). */
const RESOURCE_LINKS_SINCE = '2025-06-18';

// Schemas are rendered once per tool, not per request: a server instance is built for every HTTP request.
const rootObjects = new WeakMap<z.ZodObject, z.ZodObject>();
const listings = new WeakMap<readonly AnyTool[], Tool[]>();

/**
 * MCP requires `type: "object"` at the root of a tool's input and output JSON Schemas. A core schema that
 * carries an OpenAPI component id (`.meta({id})`) would render as a root `$ref`; an empty `extend` derives the
 * same object without the id (zod keeps every other piece of metadata, strictness and checks).
 */
function rootObject(schema: z.ZodObject): z.ZodObject {
  let derived = rootObjects.get(schema);
  if (derived === undefined) {
    derived = schema.extend({});
    rootObjects.set(schema, derived);
  }
  return derived;
}

/**
 * `tools/list`, rendered once: draft-07 JSON Schemas of what a tool accepts (`io: input`, so defaults are
 * optional) and of what it returns (`io: output`), the shapes clients have seen since the first release.
 */
export function toolListing(tools: readonly AnyTool[]): Tool[] {
  let listed = listings.get(tools);
  if (listed === undefined) {
    listed = tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: z.toJSONSchema(rootObject(tool.inputSchema), { target: 'draft-7', io: 'input' }) as Tool['inputSchema'],
      outputSchema: z.toJSONSchema(rootObject(tool.outputSchema), { target: 'draft-7', io: 'output' }) as Tool['outputSchema'],
      annotations: { title: tool.title, ...tool.annotations },
    }));
    listings.set(tools, listed);
  }
  return listed;
}

async function runTool(tool: AnyTool, input: Record<string, unknown>, scope: McpScope, withLinks: boolean): Promise<CallToolResult> {
  const requestId = scope.requestId();
  const started = performance.now();
  try {
    const principal = await scope.principal();
    // The core's one decision, before the handler: a refusal names the permission the role lacks.
    authorize(principal, principal.workspaceId, tool.permission);
    // The handler's return type is its output schema's type, and the tests call every tool through SDK clients
    // that check `structuredContent` against the listed schema, so it is not parsed again on every call.
    const value = await tool.handle(input, { principal, services: scope.services });
    scope.log.info({ tool: tool.name, ok: true, ms: performance.now() - started }, 'tool call');
    return toolSuccess(value, {
      summary: tool.summary?.(value),
      links: withLinks ? (tool.links?.(value) ?? []) : [],
      baseUrl: scope.baseUrl,
    });
  } catch (err) {
    scope.log.info({ tool: tool.name, ok: false, ms: performance.now() - started }, 'tool call');
    return toolFailure(err, requestId, scope.log);
  }
}

/**
 * One `tools/call` of a known tool: the arguments checked against its input schema (a failure answers
 * `validation_failed` in the REST error body, where an SDK check would answer free text), then the tool.
 */
async function callTool(tool: AnyTool, args: unknown, scope: McpScope, withLinks: boolean): Promise<CallToolResult> {
  const input = rootObject(tool.inputSchema).safeParse(args ?? {});
  if (!input.success) return toolFailure(validationError(input.error), scope.requestId(), scope.log);
  return runTool(tool, input.data, scope, withLinks);
}

/** The revision a request speaks: the handshake's, else what the door read from the request. */
function speaksAtLeast(server: Server, scope: McpScope, revision: string): boolean {
  const version = server.getNegotiatedProtocolVersion() ?? scope.protocolVersion;
  return version !== undefined && version >= revision;
}

/**
 * An MCP server exposing every tool of `tools/index.ts` to one caller, for both protocol eras (2024-11-05 to
 * 2026-07-28: the SDK answers `initialize` and `server/discover` and shapes each era's envelope). The tool list
 * is pre-rendered, and calls go through `callTool`.
 */
export function buildMcpServer(scope: McpScope, tools: readonly AnyTool[] = registry): Server {
  const server = new Server(serverInfo(scope.baseUrl), {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    // The list changes only with a deployment and the caller's role; clients of 2026-07-28 may keep it a few
    // minutes, for this caller only.
    cacheHints: { 'tools/list': { ttlMs: 300_000, cacheScope: 'private' } },
  });
  const listed = toolListing(tools);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  // Tools the caller's role cannot use at all are left out; a brand-limited credential still sees a tool it may
  // use on its own brands (`allows` without a brand).
  server.setRequestHandler('tools/list', async () => {
    const principal = await scope.principal();
    return { tools: listed.filter((_, i) => allows(principal, tools[i]!.permission)) };
  });
  server.setRequestHandler('tools/call', async (request, _ctx: ServerContext) => {
    const tool = byName.get(request.params.name);
    if (tool === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    return callTool(tool, request.params.arguments, scope, speaksAtLeast(server, scope, RESOURCE_LINKS_SINCE));
  });
  return server;
}
