import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type CallToolResult, CallToolRequestSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { validationError } from '../core/errors.js';
import type { z } from 'zod';
import { tools as registry } from '../../tools/index.js';
import type { Principal } from '../core/principal.js';
import type { Logger } from '../observability/logger.js';
import type { AnyTool, ToolServices } from '../../tools/define-tool.js';
import { toolFailure, toolSuccess } from './tool-result.js';

export const SERVER_INFO = { name: 'multi-network-publisher', version: '0.1.0' } as const;

const INSTRUCTIONS =
  'Publishes content to Instagram, Facebook Pages, Threads, YouTube and LinkedIn for one workspace (the one the ' +
  'credential belongs to). Typical flow: list_brands and list_connections to pick a brand, preview_content to check ' +
  'a post against every platform limit for free, publish_content with an idempotency_key, then get_content until ' +
  'every job is published or failed. To post later, give publish_content a local publish_at with the user\'s IANA ' +
  'time_zone (or queue: true for the brand\'s next queue slot, or draft: true); list_contents with status scheduled ' +
  'and from/to is the calendar; update_content, cancel_content and publish_content_now change a waiting post. Errors come back as isError results whose text is JSON with `error` (a stable code), ' +
  '`message` and `request_id`.';

/**
 * A JSON-RPC error thrown from a request handler. The SDK sends `error.code` and `error.message` as they are;
 * its `McpError` puts "MCP error <code>: " into the message itself, so clients (which add the same prefix when
 * they rethrow) would print it twice.
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }
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
}

// A server is built per HTTP request; each schema is derived once, not on every request.
const rootObjects = new WeakMap<z.ZodObject, z.ZodObject>();

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

async function runTool(tool: AnyTool, input: Record<string, unknown>, scope: McpScope): Promise<CallToolResult> {
  const requestId = scope.requestId();
  const started = performance.now();
  try {
    const principal = await scope.principal();
    const value = await tool.handle(input, { principal, services: scope.services });
    // The output schema is a promise to clients: a handler breaking it is our fault, reported as such.
    const checked = rootObject(tool.outputSchema).safeParse(value);
    if (!checked.success) throw new Error(`${tool.name} returned a result outside its output schema: ${checked.error.message}`);
    scope.log.info({ tool: tool.name, ok: true, ms: performance.now() - started }, 'tool call');
    return toolSuccess(value);
  } catch (err) {
    scope.log.info({ tool: tool.name, ok: false, ms: performance.now() - started }, 'tool call');
    return toolFailure(err, requestId, scope.log);
  }
}

/**
 * One JSON Schema validator for every per-request server: the SDK would otherwise build a new Ajv instance per
 * request (a tenth of an MCP call's CPU in the profile).
 */
const sharedValidator = new AjvJsonSchemaValidator();

/**
 * An MCP server exposing every tool of `tools/index.ts` to one caller. The SDK lists the tools with their
 * schemas; calls go through our own handler, so invalid arguments answer `validation_failed` in the same error
 * body as every other failure (the SDK's own check would answer free text).
 */
export function buildMcpServer(scope: McpScope, tools: readonly AnyTool[] = registry): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: sharedValidator });
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: rootObject(tool.inputSchema),
        outputSchema: rootObject(tool.outputSchema),
        annotations: { title: tool.title, ...tool.annotations },
      },
      (input) => runTool(tool, input, scope),
    );
  }
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  server.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (tool === undefined) throw new JsonRpcError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    const input = rootObject(tool.inputSchema).safeParse(request.params.arguments ?? {});
    if (!input.success) return toolFailure(validationError(input.error), scope.requestId(), scope.log);
    return runTool(tool, input.data, scope);
  });
  return server;
}
