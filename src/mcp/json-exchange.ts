import {
  isJSONRPCRequest,
  isJsonContentType,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type Server,
  type Transport,
} from '@modelcontextprotocol/server';
import type { Request, Response } from 'express';

/**
 * One JSON-RPC request of the `initialize` era answered with one JSON body, through a transport that lives for
 * that exchange only. It is the SDK's Streamable HTTP transport in stateless JSON mode minus its conversion of
 * Node's request and response into web `Request`/`Response` objects and back, which was most of what an MCP call
 * cost beyond the REST read it wraps (bench row (e)). The SDK's `Server` still does all of the protocol.
 *
 * Only the plain case comes here: one request (no batch, notification or response), posted as JSON by a client
 * that accepts both JSON and SSE. Everything else, including each way of getting those wrong, goes to the SDK's
 * transport, so its answers (406, 415, 400 …) stay the SDK's.
 */
export function isPlainExchange(req: Request): boolean {
  return isJSONRPCRequest(req.body) && negotiable((name) => req.get(name));
}

/** What the SDK transports accept: a JSON body, and a client that takes both JSON and an event stream. */
export function negotiable(header: (name: string) => string | undefined): boolean {
  const accept = header('accept') ?? '';
  return isJsonContentType(header('content-type') ?? null) && accept.includes('application/json') && accept.includes('text/event-stream');
}

/** A transport carrying one request in and its answer out; messages the server sends before it are dropped, as in the SDK's JSON mode. */
class SingleExchange implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];
  private settle: ((message: JSONRPCMessage) => void) | undefined;
  readonly answer: Promise<JSONRPCMessage>;

  constructor(private readonly id: JSONRPCRequest['id']) {
    this.answer = new Promise((resolve) => (this.settle = resolve));
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if ('id' in message && message.id === this.id && ('result' in message || 'error' in message)) this.settle?.(message);
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}

/** The SDK server's answer to one request; the server is closed after. */
export async function exchangeOnce(server: Server, message: JSONRPCRequest): Promise<JSONRPCMessage> {
  const exchange = new SingleExchange(message.id);
  await server.connect(exchange);
  try {
    exchange.onmessage?.(message);
    return await exchange.answer;
  } finally {
    await server.close();
  }
}

/** Serves `req.body` (checked by `isPlainExchange`) with `server` and writes the answer. */
export async function answerPlainExchange(server: Server, req: Request, res: Response): Promise<void> {
  res.status(200).json(await exchangeOnce(server, req.body as JSONRPCRequest));
}
