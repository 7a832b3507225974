import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SERVER_ERROR_MESSAGE, ServiceError } from '../core/errors.js';
import type { Logger } from '../observability/logger.js';

/**
 * The MCP door's one mapping from core outcomes to tool results (STYLE 3). A value becomes `structuredContent`
 * plus the same JSON as text (for clients that read only `content`); an error becomes an `isError` result whose
 * only payload is the REST error body, as JSON text.
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

/** A successful tool result: the core's response object, as structured content and as JSON text. */
export function toolSuccess(value: Record<string, unknown>): CallToolResult {
  return { content: asText(value), structuredContent: value };
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
  return { isError: true, content: asText(known.toBody(requestId)) };
}
