import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/server';
import type { ToolLink } from '../../tools/define-tool.js';
import { SERVER_ERROR_MESSAGE, ServiceError } from '../core/errors.js';
import type { Logger } from '../observability/logger.js';

/**
 * The MCP door's one mapping from core outcomes to tool results (STYLE 3). A value becomes `structuredContent`
 * plus the same JSON as text (for clients that read only `content`), then a short summary and links to the
 * objects it names; an error becomes an `isError` result whose only payload is the REST error body, as JSON text.
 */

function asText(value: object): CallToolResult['content'] {
  return [{ type: 'text', text: JSON.stringify(value) }];
}

/**
 * An error result can never carry `structuredContent`: MCP says structured content conforms to the tool's
 * `outputSchema`, and the error body does not. SDK v1 clients (1.32, typescript-sdk#1943) and the MCP
 * Inspector validate it even on `isError` results and throw -32602 instead of showing the error, so the type
 * forbids the field and `test/mcp/clients.test.ts` calls every tool through those clients with a failing input.
 */
export type ToolErrorResult = { isError: true; content: CallToolResult['content']; structuredContent?: never };

export interface SuccessExtras {
  summary?: string | undefined;
  /** Empty when the caller's protocol revision has no `resource_link` content. */
  links?: readonly ToolLink[];
  baseUrl?: string;
}

function resourceLink(link: ToolLink, baseUrl: string): ContentBlock {
  // Keys in the order of the protocol's ResourceLink schema, which the SDK's answers follow.
  return {
    name: link.name,
    ...(link.title !== undefined && { title: link.title }),
    uri: new URL(link.path, baseUrl).href,
    ...(link.description !== undefined && { description: link.description }),
    mimeType: 'text/html',
    type: 'resource_link',
  };
}

/**
 * A successful tool result: the core's response object as structured content and as JSON text (first, where
 * clients that parse `content[0]` have always found it), then the summary, then one link per object named.
 */
export function toolSuccess(value: Record<string, unknown>, extras: SuccessExtras = {}): CallToolResult {
  const content = asText(value);
  if (extras.summary !== undefined && extras.summary !== '') content.push({ type: 'text', text: extras.summary });
  if (extras.baseUrl !== undefined) for (const link of extras.links ?? []) content.push(resourceLink(link, extras.baseUrl));
  return { content, structuredContent: value };
}

/**
 * An `isError` tool result whose one text content is the REST body `{error, message, request_id, ...extra}` as
 * JSON. A `ServiceError` keeps its code, message and extra fields; anything else is a fault: its stack goes to
 * `log`, the caller gets `server_error` with the fixed message.
 */
export function toolFailure(err: unknown, requestId: string, log: Logger): ToolErrorResult {
  let known: ServiceError;
  if (err instanceof ServiceError) {
    known = err;
  } else {
    log.error({ err }, 'tool failed');
    known = new ServiceError('server_error', SERVER_ERROR_MESSAGE);
  }
  // Keys in the order of the protocol's result schema, which the SDK's answers follow.
  return { content: asText(known.toBody(requestId)), isError: true };
}
