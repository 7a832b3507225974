import type { ColumnType, Generated } from 'kysely';

/**
 * Table types. Times are epoch milliseconds in a BIGINT column: PostgreSQL's driver hands them back as text,
 * SQLite as a number, so reads are typed as either and the row mappers in `repositories/` convert them.
 */
export type Millis = ColumnType<number | string, number, number>;
export type NullableMillis = ColumnType<number | string | null, number | null | undefined, number | null>;

export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: Millis;
  plan: Generated<string>;
  /** JSON array of the roles whose contents need approval besides contributors; null: none. */
  approval_roles: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface BrandsTable {
  id: string;
  workspace_id: string;
  name: string;
  created_at: Millis;
  updated_at: Millis;
  deleted_at: NullableMillis;
  /** JSON array of the roles whose contents need approval; null: the workspace's default. */
  approval_roles: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ConnectionsTable {
  id: string;
  workspace_id: string;
  brand_id: string;
  platform_slug: string;
  mode: string;
  name: string;
  status: string;
  status_reason: string | null;
  created_at: Millis;
  updated_at: Millis;
  /** AES-256-GCM sealed NetworkTokens (live connections only). */
  tokens_sealed: ColumnType<string | null, string | null | undefined, string | null>;
  token_expires_at: ColumnType<number | string | null, number | null | undefined, number | null>;
  external_account_id: ColumnType<string | null, string | null | undefined, string | null>;
  expiry_warned_at: ColumnType<number | string | null, number | null | undefined, number | null>;
  /** A renewal of the tokens holds the connection until then (epoch ms); null when none runs. */
  token_refresh_until: NullableMillis;
}

export interface ContentsTable {
  id: string;
  workspace_id: string;
  brand_id: string;
  content_type: string;
  status: string;
  /** JSON of the validated request (text, media, thread, overrides…). */
  request: string;
  created_at: Millis;
  updated_at: Millis;
  completed_at: NullableMillis;
  /** The publication instant: scheduled, or when publishing started; null for a draft without a time. */
  publish_at: NullableMillis;
  /** IANA zone the time was meant in, and the local wall time (`YYYY-MM-DDTHH:MM`) meant there. */
  time_zone: string | null;
  local_publish_at: string | null;
  /** The brand queue slot (an instant) this content holds while scheduled from the queue. */
  queue_slot: NullableMillis;
  /** JSON of the content fields as validated (what an edit merges into); null for rows older than drafts. */
  input: string | null;
  version: Generated<number>;
  /** Who last submitted it for approval (`user:…`, `api_key:…`, `oauth:…`); null when never submitted. */
  submitted_by: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A content's review thread: comments and approval steps, with the actor copied (as the audit log does). */
export interface ContentReviewsTable {
  id: string;
  workspace_id: string;
  content_id: string;
  kind: string;
  actor_type: string;
  actor_id: string | null;
  actor_label: string | null;
  actor_role: string | null;
  body: string | null;
  created_at: Millis;
}

export interface JobsTable {
  id: string;
  content_id: string;
  workspace_id: string;
  connection_id: string;
  platform_slug: string;
  status: string;
  error_code: string | null;
  error_message: string | null;
  previous_status: string | null;
  sandbox_outcome: string | null;
  external_container_id: string | null;
  external_post_id: string | null;
  external_post_url: string | null;
  attempts: Generated<number>;
  confirm_checks: Generated<number>;
  confirm_misses: Generated<number>;
  confirm_deadline: NullableMillis;
  late_check_until: NullableMillis;
  active: Generated<number>;
  run_at: Millis;
  locked_by: string | null;
  locked_until: NullableMillis;
  created_at: Millis;
  updated_at: Millis;
  published_at: NullableMillis;
  credit_batch_id: ColumnType<string | null, string | null | undefined, string | null>;
  credit_cost: ColumnType<number | string | null, number | null | undefined, number | null>;
  /** JSON of the adapter's saved progress (chain index, upload session…). */
  network_state: ColumnType<string | null, string | null | undefined, string | null>;
  /** What the network said about a published post that its author should know (0018). */
  notice: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface MeterCountersTable {
  workspace_id: string;
  meter: string;
  period: string;
  used: ColumnType<number | string, number | undefined, number>;
}

export interface IdempotencyKeysTable {
  workspace_id: string;
  key: string;
  request_hash: string;
  state: string;
  outcome: string | null;
  locked_until: Millis;
  expires_at: Millis;
  created_at: Millis;
  /** The random token of the request holding the claim (migration 0009); null on rows written before it. */
  owner_token: string | null;
}

export interface MediaTable {
  id: string;
  workspace_id: string;
  content_type: string;
  size_bytes: ColumnType<number | string, number, number>;
  storage_path: string;
  created_at: Millis;
}

export interface EventsTable {
  id: string;
  workspace_id: string;
  type: string;
  subject_id: string;
  payload: string;
  created_at: Millis;
}

export interface SandboxPostsTable {
  id: string;
  container_id: string;
  job_id: string;
  connection_id: string;
  platform_slug: string;
  created_at: Millis;
}

export interface SandboxContainersTable {
  id: string;
  job_id: string;
  created_at: Millis;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  /** hex SHA-256 of the plaintext key; the plaintext is never stored. */
  key_digest: string;
  created_at: Millis;
  last_used_at: NullableMillis;
  revoked_at: NullableMillis;
  /** A role of `src/core/permissions/roles.ts`; `admin` for keys made before roles. */
  role: Generated<string>;
  /** JSON array of brand ids the key is limited to; null for every brand. */
  brand_ids: string | null;
  /** `usr_…` or `key_…` that made the key; null when the service minted it. */
  created_by: string | null;
}

export interface UsersTable {
  id: string;
  /** Lowercased. */
  email: string;
  name: string | null;
  password_hash: string | null;
  email_verified_at: NullableMillis;
  created_at: Millis;
  updated_at: Millis;
}

export interface MembershipsTable {
  id: string;
  workspace_id: string;
  user_id: string;
  role: string;
  /** JSON array of brand ids; null for every brand. */
  brand_ids: string | null;
  created_at: Millis;
  updated_at: Millis;
}

/** A person's TOTP second factor: the secret sealed with SECRET_KEY, in force once confirmed. */
export interface UserTotpTable {
  user_id: string;
  secret_sealed: string;
  confirmed_at: NullableMillis;
  /** The last time step accepted: a code of that step or an earlier one is refused (no replay). */
  last_step: ColumnType<number | string | null, number | null | undefined, number | null>;
  created_at: Millis;
}

/** Single-use recovery codes, SHA-256 digests only. */
export interface RecoveryCodesTable {
  id: string;
  user_id: string;
  code_digest: string;
  created_at: Millis;
  used_at: NullableMillis;
}

/** One-time password reset (and first password) links, SHA-256 digests only. */
export interface PasswordResetsTable {
  id: string;
  user_id: string;
  token_digest: string;
  created_at: Millis;
  expires_at: Millis;
  used_at: NullableMillis;
}

/** The role and brands an OAuth grant carries, and who approved it (keyed by oidc-provider's grant id). */
export interface OAuthGrantAccessTable {
  grant_id: string;
  workspace_id: string;
  client_id: string;
  /** user or api_key */
  approver_type: string;
  approver_id: string;
  approver_label: string | null;
  role: string;
  /** JSON array of brand ids; null for every brand. */
  brand_ids: string | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface UserSessionsTable {
  id: string;
  /** hex SHA-256 of the cookie value. */
  token_digest: string;
  user_id: string;
  /** The workspace the person is acting in; null until they pick one. */
  workspace_id: string | null;
  auth_method: string;
  ip: string | null;
  user_agent: string | null;
  created_at: Millis;
  last_seen_at: Millis;
  ends_at: Millis;
}

export interface AuditEventsTable {
  id: string;
  workspace_id: string;
  occurred_at: Millis;
  action: string;
  actor_type: string;
  actor_id: string | null;
  actor_label: string | null;
  actor_role: string | null;
  via: string;
  target_type: string | null;
  target_id: string | null;
  target_label: string | null;
  /** JSON object. */
  details: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
}

export interface InvitationsTable {
  id: string;
  workspace_id: string;
  email: string;
  role: string;
  brand_ids: string | null;
  /** hex SHA-256 of the one-time token; the token is shown once. */
  token_digest: string;
  created_by: string | null;
  created_at: Millis;
  expires_at: Millis;
  accepted_at: NullableMillis;
  accepted_by: string | null;
  revoked_at: NullableMillis;
}

/**
 * Rate-limit windows on PostgreSQL, written by rate-limiter-flexible's `RateLimiterPostgres` (src/web/rate-limit.ts).
 * The table has that store's documented shape and is created by migration 0001, so the schema stays ours and the
 * library is told not to create it. SQLite counts in memory and leaves it empty.
 */
export interface RateLimitsTable {
  key: string;
  points: Generated<number>;
  expire: ColumnType<number | string | null, number | null, number | null>;
}

/** Written by earlier versions only (a registry of processes sharing a SQLite file's rate limits); unused now. */
export interface RateLimitProcessesTable {
  id: string;
  pid: number;
  heartbeat_at: ColumnType<number | string, number, number>;
  counting: 'memory' | 'database';
}

/** Small key/value facts about this installation, e.g. whether the first start already happened. */
export interface ServiceMetaTable {
  key: string;
  value: string;
  created_at: Millis;
}

export interface WebhooksTable {
  id: string;
  workspace_id: string;
  url: string;
  description: string;
  /** JSON array of event types. */
  enabled_events: string;
  active: number;
  /** AES-256-GCM sealed signing secret. */
  secret_sealed: string;
  created_at: Millis;
  updated_at: Millis;
  deleted_at: NullableMillis;
}

export interface DeliveriesTable {
  id: string;
  workspace_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  body: string;
  status: string;
  attempt_count: Generated<number>;
  manual: Generated<number>;
  /** 1 while a redeliver waits for an attempt claimed after it (migration 0008). */
  redeliver_requested: Generated<number>;
  next_attempt_at: NullableMillis;
  locked_by: string | null;
  locked_until: NullableMillis;
  created_at: Millis;
  updated_at: Millis;
  delivered_at: NullableMillis;
}

export interface DeliveryAttemptsTable {
  id: string;
  delivery_id: string;
  number: number;
  manual: number;
  at: Millis;
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  /** At most 2 KB of the receiver's answer, as text (migration 0012); null before it or with no answer. */
  response_excerpt: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface OAuthClientsTable {
  id: string;
  workspace_id: string | null;
  kind: string;
  /** oidc-provider client metadata as JSON; `client_secret` there is the SHA-256 digest, never the secret. */
  metadata: string;
  created_at: Millis;
  updated_at: Millis;
}

export interface OAuthStoreTable {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  uid: string | null;
  account_id: string | null;
  client_id: string | null;
  expires_at: NullableMillis;
  consumed_at: NullableMillis;
}

export interface CreditBatchesTable {
  id: string;
  workspace_id: string;
  amount: ColumnType<number | string, number, number>;
  remaining: ColumnType<number | string, number, number>;
  source: string;
  external_ref: string | null;
  created_at: Millis;
  expires_at: NullableMillis;
  expired_at: NullableMillis;
}

export interface CreditLedgerTable {
  id: string;
  workspace_id: string;
  batch_id: string;
  kind: string;
  amount: ColumnType<number | string, number, number>;
  operation: string | null;
  reference: string | null;
  created_at: Millis;
}

export interface NetworkOAuthStatesTable {
  state: string;
  workspace_id: string;
  brand_id: string;
  connection_id: string | null;
  platform_slug: string;
  created_at: Millis;
  expires_at: Millis;
  used_at: NullableMillis;
  /** The user's server, for networks with one server per user (Mastodon). */
  instance_origin: string | null;
}

/** This service's app registration on a user's server (Mastodon), one per server and callback address. */
export interface NetworkInstanceAppsTable {
  platform_slug: string;
  origin: string;
  redirect_uri: string;
  client_id: string;
  client_secret_sealed: string;
  created_at: Millis;
}

/** Web dashboard sessions; the cookie value is kept as a SHA-256 digest only. */
export interface DashboardSessionsTable {
  token_digest: string;
  workspace_id: string;
  key_id: string;
  created_at: Millis;
  last_seen_at: Millis;
  ends_at: Millis;
}

/** A brand's publishing queue; `slots` is JSON text of `[{days, time}]`. */
export interface BrandQueuesTable {
  brand_id: string;
  workspace_id: string;
  time_zone: string;
  slots: string;
  updated_at: Millis;
}

/** A person's WebAuthn credential (public half only). */
export interface PasskeysTable {
  id: string;
  credential_id: string;
  user_id: string;
  public_key: string;
  counter: ColumnType<number | string, number, number>;
  transports: string | null;
  name: string;
  created_at: Millis;
  last_used_at: NullableMillis;
}

/** One-time values between the two requests of a sign-in ceremony (WebAuthn challenge, OpenID state). */
export interface AuthChallengesTable {
  id: string;
  purpose: string;
  challenge: string;
  payload: string | null;
  user_id: string | null;
  session_id: string | null;
  created_at: Millis;
  expires_at: Millis;
}

/** An OpenID provider's account (issuer, subject) linked to a person. */
export interface SsoIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: string;
  email: string | null;
  created_at: Millis;
  last_used_at: NullableMillis;
}

export interface Database {
  brand_queues: BrandQueuesTable;
  dashboard_sessions: DashboardSessionsTable;
  network_oauth_states: NetworkOAuthStatesTable;
  network_instance_apps: NetworkInstanceAppsTable;
  credit_batches: CreditBatchesTable;
  credit_ledger: CreditLedgerTable;
  oauth_clients: OAuthClientsTable;
  oauth_store: OAuthStoreTable;
  webhooks: WebhooksTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  workspaces: WorkspacesTable;
  brands: BrandsTable;
  connections: ConnectionsTable;
  contents: ContentsTable;
  jobs: JobsTable;
  meter_counters: MeterCountersTable;
  idempotency_keys: IdempotencyKeysTable;
  media: MediaTable;
  events: EventsTable;
  sandbox_posts: SandboxPostsTable;
  sandbox_containers: SandboxContainersTable;
  api_keys: ApiKeysTable;
  users: UsersTable;
  memberships: MembershipsTable;
  invitations: InvitationsTable;
  user_sessions: UserSessionsTable;
  audit_events: AuditEventsTable;
  user_totp: UserTotpTable;
  recovery_codes: RecoveryCodesTable;
  password_resets: PasswordResetsTable;
  oauth_grant_access: OAuthGrantAccessTable;
  passkeys: PasskeysTable;
  auth_challenges: AuthChallengesTable;
  sso_identities: SsoIdentitiesTable;
  content_reviews: ContentReviewsTable;
  rate_limits: RateLimitsTable;
  rate_limit_processes: RateLimitProcessesTable;
  service_meta: ServiceMetaTable;
}
