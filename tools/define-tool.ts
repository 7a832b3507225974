import type { z } from 'zod';
import type { AuditService } from '../src/core/audit/audit.service.js';
import type { BrandsService } from '../src/core/brands/brands.service.js';
import type { ConnectionsService } from '../src/core/connections/connections.service.js';
import type { NetworkConnectService } from '../src/core/connections/network-connect.service.js';
import type { ContentsService } from '../src/core/contents/contents.service.js';
import type { MediaService } from '../src/core/media/media.service.js';
import type { MetersService } from '../src/core/meters/meters.service.js';
import type { Permission } from '../src/core/permissions/roles.js';
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
  audit: AuditService;
}

/**
 * What a tool handler receives beside its input. The principal comes from the door's auth layer through a
 * closure (see `buildMcpServer`), never from the MCP `extra`, so a handler cannot see a token or a request.
 */
export interface ToolContext {
  principal: Principal;
  services: ToolServices;
}

/**
 * MCP tool annotations, every one stated: a missing hint lets a client assume the worst (or the best). One rule
 * per hint, read as the MCP specification ("false: the tool performs only additive updates") and the ChatGPT
 * Apps review (destructive: may delete or overwrite user data; open world: publishes or acts outside the user's
 * account) read them:
 * - readOnlyHint: a pure read; it stores, charges, publishes and sends nothing.
 * - destructiveHint: it overwrites or removes something that exists — a field, a setting, a choice or a time a
 *   person set — so what was there is gone: every edit (`update_*`), replacement (`set_queue`), choice
 *   (`choose_publish_target`), cancel and delete, and `publish_content_now`, which gives up the time a content
 *   was scheduled for. A call that only adds (a creation, a send, another attempt of what failed) is not.
 * - idempotentHint: a second call with the same arguments has no further effect (a repeat may answer an error,
 *   as a second delete does, but changes nothing).
 * - openWorldHint: the call, or the work it starts, acts outside the service on the user's behalf: it publishes to
 *   a network, calls a network with the user's connection (places, sign-in), or sends (or points) the workspace's
 *   events to an outside receiver. An anonymous read of a public address the user named, only to check or copy a
 *   file (`preview_content`, `import_media_from_url`), is not.
 * Each tool states why beside its annotations where a hint is not plain from its name; the registry test holds
 * every tool's hints in one table and checks the rule's consequences.
 */
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
  /**
   * What the caller's role must allow for the tool to be of any use: `tools/list` leaves out tools the role
   * cannot use, and a call is refused before the handler. The core still decides each call (a brand the
   * credential does not see, or `contents.publish` for a `publish_content` that is not a draft).
   */
  permission: Permission;
  inputSchema: I;
  outputSchema: O;
  /**
   * One or two sentences saying what happened, with names and counts, for the model and the person reading
   * along; the result's text carries it after the JSON (which stays first, for clients that parse it).
   */
  summary(output: z.output<O>): string;
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

/**
 * Dashboard pages a result can link to; each path is a page of src/dashboard/pages (the registry test checks
 * them against the served routes). Brands and their connections have no page of their own: the brands page
 * holds a card per brand (`#brand-{id}`) listing its connections.
 */
export const dashboardLink = {
  content: (id: string, status?: string): ToolLink => ({ path: `/dashboard/contents/${encodeURIComponent(id)}`, name: id, title: `Post ${id}${status === undefined ? '' : ` (${status})`}` }),
  brand: (id: string, name: string): ToolLink => ({ path: `/dashboard/brands#brand-${encodeURIComponent(id)}`, name: id, title: `Brand ${name}` }),
  queue: (brandId: string): ToolLink => ({ path: `/dashboard/brands/${encodeURIComponent(brandId)}/queue`, name: `${brandId} queue`, title: `Publishing queue of ${brandId}` }),
  brandConnections: (brandId: string): ToolLink => ({ path: `/dashboard/brands#brand-${encodeURIComponent(brandId)}`, name: brandId, title: `Connections of brand ${brandId}` }),
  connection: (id: string, brandId: string, name: string): ToolLink => ({
    path: `/dashboard/brands#brand-${encodeURIComponent(brandId)}`,
    name: id,
    title: `Connection ${name}`,
    description: `Listed under its brand ${brandId}`,
  }),
  webhook: (id: string, url: string): ToolLink => ({ path: `/dashboard/webhooks/${encodeURIComponent(id)}`, name: id, title: `Webhook endpoint ${url}` }),
  delivery: (id: string, eventType: string): ToolLink => ({ path: `/dashboard/deliveries/${encodeURIComponent(id)}`, name: id, title: `Delivery ${id} (${eventType})` }),
  media: (): ToolLink => ({ path: '/dashboard/media', name: 'media library', title: 'Media library' }),
  wallet: (): ToolLink => ({ path: '/dashboard/wallet', name: 'wallet', title: 'Credit wallet' }),
  approvals: (): ToolLink => ({ path: '/dashboard/approvals', name: 'approvals', title: 'Contents waiting for approval' }),
};

/** What a model tells the user when a content waits for a person: who acts, and where. */
export const PENDING_APPROVAL_WORDS =
  "It is not published yet. A person who can approve must approve it on the dashboard's Approvals page (/dashboard/approvals); tell the user it waits for approval.";

/** Lists link at most this many of their items: enough to open what was just shown, not a page of links. */
export const MAX_LIST_LINKS = 10;

/** `n` and the noun, plural when needed: "1 post", "3 posts". */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

/** Items in words, the rest counted: "a, b and c", "a, b, c and 4 more". */
export function listed(items: readonly string[], max = 5): string {
  if (items.length === 0) return 'none';
  const shown = items.slice(0, items.length > max ? max - 1 : max);
  const rest = items.length - shown.length;
  if (rest > 0) return `${shown.join(', ')} and ${rest} more`;
  return shown.length === 1 ? shown[0]! : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)!}`;
}

/** How many of each value, in first-seen order: "2 published, 1 failed". */
export function tally(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${n} ${v}`).join(', ');
}

/** A content's time as the user meant it ("2026-11-24 09:00 America/New_York"), else the UTC instant, else null. */
export function whenOf(c: { publish_at: string | null; time_zone: string | null; local_publish_at: string | null }): string | null {
  if (c.local_publish_at !== null && c.time_zone !== null) return `${c.local_publish_at.replace('T', ' ')} ${c.time_zone}`;
  return c.publish_at;
}
