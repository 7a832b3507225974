import type { z } from 'zod';
import type { BrandsService } from '../src/core/brands/brands.service.js';
import type { ConnectionsService } from '../src/core/connections/connections.service.js';
import type { NetworkConnectService } from '../src/core/connections/network-connect.service.js';
import type { ContentsService } from '../src/core/contents/contents.service.js';
import type { MediaService } from '../src/core/media/media.service.js';
import type { MetersService } from '../src/core/meters/meters.service.js';
import type { Principal } from '../src/core/principal.js';
import type { QueueService } from '../src/core/scheduling/queue.service.js';
import type { WalletService } from '../src/core/wallet/wallet.service.js';
import type { WebhooksService } from '../src/core/webhooks/webhooks.service.js';

/** The core services the tools call; `Container['services']` satisfies it. */
export interface ToolServices {
  contents: ContentsService;
  brands: BrandsService;
  queue: QueueService;
  connections: ConnectionsService;
  webhooks: WebhooksService;
  media: MediaService;
  meters: MetersService;
  wallet: WalletService;
  networkConnect: NetworkConnectService;
}

/**
 * What a tool handler receives beside its input. The principal comes from the door's auth layer through a
 * closure (see `buildMcpServer`), never from the MCP `extra`, so a handler cannot see a token or a request.
 */
export interface ToolContext {
  principal: Principal;
  services: ToolServices;
}

/** MCP tool annotations, every one stated: a missing hint lets a client assume the worst (or the best). */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * An object a tool result names, offered to the client as an MCP `resource_link` (protocol 2025-06-18 and
 * later). `path` is the dashboard page that shows it; the MCP door makes it absolute with the public base URL,
 * so a person can open what the assistant just did.
 */
export interface ToolLink {
  path: string;
  /** A stable identifier for the object, e.g. its id. */
  name: string;
  /** What a person reads, e.g. "Post ct_… (scheduled)". */
  title?: string;
  description?: string;
}

/**
 * One MCP tool, declared once: the registry lists it, the server registers it, the registry test inspects it.
 * Input and output schemas are the core's zod schemas (objects at the root, as MCP requires).
 */
export interface ToolDefinition<I extends z.ZodObject, O extends z.ZodObject> {
  /** snake_case `verb_noun`, equal to the file name with `-` turned into `_`. */
  name: string;
  title: string;
  /** Written for a model: what it does, when to use it, what it costs on meters, the errors that matter. */
  description: string;
  annotations: ToolHints;
  inputSchema: I;
  outputSchema: O;
  /**
   * One or two sentences saying what happened, for the model and the person reading along; the result's text
   * carries it after the JSON (which stays first, for clients that parse it).
   */
  summary?(output: z.output<O>): string;
  /** The objects the answer names, as links; none when it names nothing one can open. */
  links?(output: z.output<O>): ToolLink[];
  /** Calls one core function with `ctx.principal`'s own workspace; throws the core's `ServiceError`. */
  handle(input: z.output<I>, ctx: ToolContext): Promise<z.output<O>>;
}

// `handle` is a method, so any concrete tool is assignable once its schemas are widened (as `defineRoute` does).
export type AnyTool = ToolDefinition<z.ZodObject, z.ZodObject>;

/** Declares a tool with its input and output types inferred from its schemas. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(tool: ToolDefinition<I, O>): AnyTool {
  return tool as unknown as AnyTool;
}
