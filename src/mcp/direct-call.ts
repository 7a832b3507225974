import { randomUUID } from 'node:crypto';
import {
  type CallToolResult,
  type InboundClassificationOutcome,
  type JSONRPCRequest,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { tools as registry } from '../../tools/index.js';
import type { AnyTool } from '../../tools/define-tool.js';
import { negotiable } from './json-exchange.js';
import { MODERN_PROTOCOL_VERSIONS } from './jsonrpc-guard.js';
import { callTool, type McpScope, RESOURCE_LINKS_SINCE, serverInfo } from './server.js';

/**
 * `tools/call` on a known tool, answered without building an SDK server for the one exchange. It is the one
 * call an assistant repeats all day, and the SDK's per-request work (a server and a transport per request,
 * zod validation of the request and of our own result, and for 2026-07-28 a web `Request`/`Response` pair) cost
 * more than the core read it wraps (bench row (e)). The answer is the one the SDK gives, byte for byte:
 * `test/mcp/direct-call.test.ts` compares the two on every case it takes.
 *
 * Only the unambiguous case comes here; everything else goes to the SDK, so each way of getting a request wrong
 * keeps the SDK's answer: an unknown tool, params other than `name`/`arguments`/`_meta` (a task, say),
 * `arguments` that are not an object, a header that is missing or disagrees with the body, an `Accept` or
 * `Content-Type` the transport would refuse, a revision it would refuse.
 */

/** A `tools/call` this module answers: its message, its tool and the revision it speaks. */
export interface DirectCall {
  message: JSONRPCRequest;
  tool: AnyTool;
  arguments: unknown;
  /** `undefined`: a 2025-era request without `MCP-Protocol-Version` (the transport then assumes 2025-03-26). */
  revision: string | undefined;
  modern: boolean;
}

/** Reads one request header by its lower-case name. */
export type HeaderReader = (name: string) => string | undefined;

const PARAM_KEYS = new Set(['name', 'arguments', '_meta']);
const byName = new Map<string, AnyTool>(registry.map((tool) => [tool.name, tool]));

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const CLIENT_KEYS = new Set(['name', 'version', 'title']);

/**
 * Whether a body is, for the SDK's classifier, certainly a 2025-era request (`legacy`, `no-claim`): the JSON-RPC
 * request shape it checks (its schema is strict: these keys only, version 2.0, a string or integer id) with no
 * `_meta` (so no envelope claim, and no request metadata to validate) and no 2026 header. The classification,
 * three schema parses, is then skipped.
 */
function plainLegacyRequest(body: Record<string, unknown>, params: Record<string, unknown>, version: string | undefined): boolean {
  return (
    (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) &&
    params._meta === undefined &&
    body.jsonrpc === '2.0' &&
    (typeof body.id === 'string' || Number.isSafeInteger(body.id)) &&
    Object.keys(body).every((key) => REQUEST_KEYS.has(key))
  );
}

const ENVELOPE_KEYS = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY]);

/**
 * The same certainty for a 2026-07-28 request (`modern`, a `request`): the request shape as above, and an envelope
 * the classifier's checks accept whatever else they look at: exactly the three keys, a revision we speak that the
 * header repeats, a client named by `name` and `version` (and perhaps `title`), no declared capabilities.
 */
function plainModernRequest(body: Record<string, unknown>, params: Record<string, unknown>, version: string | undefined): boolean {
  const meta = params._meta;
  if (!isRecord(meta) || !Object.keys(meta).every((key) => ENVELOPE_KEYS.has(key))) return false;
  const client = meta[CLIENT_INFO_META_KEY];
  const capabilities = meta[CLIENT_CAPABILITIES_META_KEY];
  return (
    version !== undefined &&
    MODERN_PROTOCOL_VERSIONS.includes(version) &&
    meta[PROTOCOL_VERSION_META_KEY] === version &&
    isRecord(client) &&
    typeof client.name === 'string' &&
    typeof client.version === 'string' &&
    (client.title === undefined || typeof client.title === 'string') &&
    Object.keys(client).every((key) => CLIENT_KEYS.has(key)) &&
    isRecord(capabilities) &&
    Object.keys(capabilities).length === 0 &&
    body.jsonrpc === '2.0' &&
    (typeof body.id === 'string' || Number.isSafeInteger(body.id)) &&
    Object.keys(body).every((key) => REQUEST_KEYS.has(key))
  );
}

/**
 * The call in `body`, when it is one this module answers exactly as the SDK would; `undefined` sends the
 * request to the SDK. `classify` gives the SDK's own classification of the request (`classifyInboundRequest`),
 * asked only when the body alone does not settle it.
 */
export function directCallOf(body: unknown, header: HeaderReader, classify: () => InboundClassificationOutcome): DirectCall | undefined {
  if (!isRecord(body) || body.method !== 'tools/call' || !negotiable(header)) return undefined;
  const params = body.params;
  if (!isRecord(params) || typeof params.name !== 'string' || !Object.keys(params).every((key) => PARAM_KEYS.has(key))) return undefined;
  if (params.arguments !== undefined && !isRecord(params.arguments)) return undefined;
  if (params._meta !== undefined && !isRecord(params._meta)) return undefined;
  const tool = byName.get(params.name);
  if (tool === undefined) return undefined;
  const version = header('mcp-protocol-version');
  const message = body as unknown as JSONRPCRequest;
  const legacy = (): DirectCall => ({ message, tool, arguments: params.arguments, revision: version, modern: false });
  if (plainLegacyRequest(body, params, version)) return legacy();

  const headersAgree = header('mcp-method') === 'tools/call' && header('mcp-name') === params.name;
  if (headersAgree && plainModernRequest(body, params, version)) return { message, tool, arguments: params.arguments, revision: version, modern: true };

  const route = classify();
  if (route.kind === 'legacy') {
    // `no-claim`: the classifier checked the JSON-RPC shape and found no envelope.
    if (route.reason !== 'no-claim' || (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
    return legacy();
  }
  if (route.kind !== 'modern' || route.messageKind !== 'request') return undefined;
  const revision = route.classification.revision;
  // The header checks the SDK's modern entry makes before serving (standard request headers, MCP 2026-07-28).
  if (revision === undefined || !MODERN_PROTOCOL_VERSIONS.includes(revision) || version !== revision) return undefined;
  if (!headersAgree) return undefined;
  return { message, tool, arguments: params.arguments, revision, modern: true };
}

/** The JSON-RPC answer, serialized once, with the content type the SDK's transport of that era sends. */
export interface DirectAnswer {
  contentType: string;
  body: string;
}

/**
 * Runs the call and shapes the answer as the SDK does: the result, then `jsonrpc` and `id`; on 2026-07-28 the
 * result also carries `resultType: "complete"` and the server's identity in `_meta`.
 */
/**
 * Stands in for `structuredContent` while the answer is serialized: its JSON is the result's first text, already
 * serialized once by `toolSuccess`, and is put in its place rather than serialized a second time. A fresh random
 * value per process, so no tool output can contain it.
 */
const STRUCTURED = `structured-${randomUUID()}`;
const STRUCTURED_JSON = JSON.stringify(STRUCTURED);

function serialize(result: CallToolResult & Record<string, unknown>, id: JSONRPCRequest['id']): string {
  const first = result.content[0];
  if (result.structuredContent === undefined || first?.type !== 'text') return JSON.stringify({ result, jsonrpc: '2.0', id });
  const body = JSON.stringify({ result: { ...result, structuredContent: STRUCTURED }, jsonrpc: '2.0', id });
  return body.replace(STRUCTURED_JSON, () => first.text);
}

export async function answerDirectCall(call: DirectCall, scope: McpScope): Promise<DirectAnswer> {
  const withLinks = call.revision !== undefined && call.revision >= RESOURCE_LINKS_SINCE;
  const outcome: CallToolResult = await callTool(call.tool, call.arguments, scope, withLinks);
  if (!call.modern) return { contentType: 'application/json; charset=utf-8', body: serialize(outcome, call.message.id) };
  const result = { ...outcome, resultType: 'complete', _meta: { [SERVER_INFO_META_KEY]: serverInfo(scope.baseUrl) } };
  return { contentType: 'application/json', body: serialize(result, call.message.id) };
}
