import { z } from 'zod';
import { PLATFORM_SLUGS } from '../../vocabulary/platforms.js';

/** A connection's id, wherever a door takes one. */
export const connectionIdSchema = z.string().describe('Connection id (conn_…).');

export const CONNECTION_STATUSES = ['active', 'expired', 'inactive'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

export const platformSlugSchema = z.enum(PLATFORM_SLUGS).describe('Platform identifier.');

export const createSandboxConnectionInputSchema = z
  .strictObject({
    platform_slug: platformSlugSchema,
    mode: z.literal('sandbox').describe('Only sandbox connections are created directly; live ones come through the network\'s OAuth.'),
    name: z.string().trim().min(1).max(100).describe('Label, e.g. the account handle it stands for.'),
  })
  .meta({ id: 'CreateSandboxConnectionInput' });

export const connectionSchema = z
  .object({
    id: z.string().describe('Connection id (conn_…).'),
    brand_id: z.string(),
    platform_slug: platformSlugSchema,
    mode: z.enum(['sandbox', 'live']),
    name: z.string(),
    status: z
      .enum(CONNECTION_STATUSES)
      .describe('active: usable; expired: must be re-authorised (jobs fail with token_expired); inactive: deactivated, frees its slot.'),
    status_reason: z.string().nullable().describe('Why the connection left `active`, e.g. token_expired.'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Connection' });

export const connectionListQuerySchema = z.strictObject({
  brand_id: z.string().optional().describe('Only connections of this brand.'),
  platform_slug: platformSlugSchema.optional(),
  status: z.enum(CONNECTION_STATUSES).optional().describe('Only connections in this status (e.g. expired to find the ones to reconnect).'),
});

export const connectionListSchema = z.object({ data: z.array(connectionSchema) }).meta({ id: 'ConnectionList' });

/** Spec 4.6 startOAuthConnection: where to send the user; the network's callback then creates the connection. */
export const startedOAuthSchema = z
  .object({
    authorization_url: z.string().describe("Send the user here: the network's consent screen."),
    state: z.string().describe('Single-use; bound to this workspace, brand and network.'),
    expires_at: z.iso.datetime().describe('The user must finish before this.'),
  })
  .meta({ id: 'StartedNetworkOAuth' });

/**
 * What a network's OAuth redirect carries back to the callback (RFC 6749 §4.1.2 and §4.1.2.1): `code` and
 * `state`, or `error`. One schema for every door that receives it (the REST route and the dashboard's page).
 */
export const networkCallbackQuerySchema = z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(200).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2000).optional(),
});

/** Starting a live connection: the network, and for per-server networks (Mastodon) the user's server. */
export const startOAuthConnectionInputSchema = z
  .strictObject({
    platform_slug: platformSlugSchema,
    instance: z
      .string()
      .trim()
      .min(1)
      .max(253)
      .optional()
      .describe("For Mastodon (connect `instance_oauth` in GET /platforms): the user's server, as a host name or https:// origin (e.g. mastodon.social). Refused for other networks."),
  })
  .meta({ id: 'StartOAuthConnectionInput' });

/** Connecting an account with its app password (Bluesky): used once for the sign-in, never stored. */
export const appPasswordSignInSchema = z
  .strictObject({
    identifier: z.string().trim().min(1).max(253).optional().describe('The handle (e.g. alice.bsky.social) or e-mail of the account. Required for a new connection; a reconnection defaults to the connected handle.'),
    app_password: z.string().min(1).max(200).describe("An app password made in the network's settings (never the account's main password). Used once, never stored."),
    service: z.string().url().max(500).optional().describe("The account's sign-in server when it is not the network's default (a self-hosted data server)."),
  })
  .meta({ id: 'AppPasswordSignIn' });

export const connectAppPasswordInputSchema = z
  .strictObject({ platform_slug: platformSlugSchema, ...appPasswordSignInSchema.shape })
  .meta({ id: 'ConnectAppPasswordInput' });

/** The places a live connection can publish to, on networks that have several per account (Pinterest's boards). */
export const publishTargetListSchema = z
  .object({
    data: z.array(
      z.object({
        id: z.string().describe("The network's id of the place (a Pinterest board id)."),
        name: z.string(),
        current: z.boolean().describe('Whether the connection publishes there now.'),
      }),
    ),
  })
  .meta({ id: 'PublishTargetList' });

export const chooseTargetInputSchema = z
  .strictObject({ target_id: z.string().trim().min(1).max(100).describe('One of GET …/targets: where the connection publishes from now on.') })
  .meta({ id: 'ChooseTargetInput' });

export type PublishTargetList = z.infer<typeof publishTargetListSchema>;
export type AppPasswordSignIn = z.infer<typeof appPasswordSignInSchema>;
export type CreateSandboxConnectionInput = z.infer<typeof createSandboxConnectionInputSchema>;
export type Connection = z.infer<typeof connectionSchema>;
export type ConnectionList = z.infer<typeof connectionListSchema>;
export type ConnectionListQuery = z.infer<typeof connectionListQuerySchema>;
export type StartedOAuth = z.infer<typeof startedOAuthSchema>;
export type NetworkCallbackQuery = z.infer<typeof networkCallbackQuerySchema>;
