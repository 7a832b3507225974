import type { JobErrorCode } from '../vocabulary/job-errors.js';
import type { ContentType, PlatformSlug, TiktokPrivacyLevel } from '../vocabulary/platforms.js';

/** The account a live connection publishes as, with its (decrypted) token. */
export interface LiveCredentials {
  accessToken: string;
  /**
   * The network's id of the account: instagram `ig-user-id`, facebook `page-id`, threads `threads-user-id`,
   * linkedin author URN (`urn:li:person:…` or `urn:li:organization:…`), youtube channel id.
   */
  accountId: string;
}

/** A media item as the adapter sees it: a public URL (networks that fetch it themselves) and how to read it. */
export interface MediaRef {
  /** A public address given by the integrator, or `file://` for an upload kept by this service. */
  url: string;
  /**
   * For an upload: a signed, expiring public address of the file, for networks that download media themselves
   * (they cannot read `file://`). Absent for media given by address.
   */
  publicUrl?: string | null;
  sizeBytes: number | null;
  contentType: string | null;
}

/** What a network needs to publish one job. */
export interface PublishRequest {
  jobId: string;
  attempt: number;
  platform: PlatformSlug;
  connection: { id: string; mode: 'sandbox' | 'live'; name: string };
  /** Present for live connections; null on the sandbox. */
  credentials: LiveCredentials | null;
  contentType: ContentType;
  text: string | null;
  title: string | null;
  /**
   * The chain to publish, post after post, whenever non-empty: a `thread` content's posts, or a long text or
   * caption that `thread_split: "auto"` split (whose content type stays `text`, `photo`…). Null: one post.
   */
  thread: string[] | null;
  media: MediaRef[];
  /** Forced outcome on sandbox connections. */
  sandboxOutcome: string | null;
  /**
   * On TikTok, the creator's own privacy and interaction choices (TikTok's Direct Post guidelines); absent for
   * other networks and for contents stored before they were asked for.
   */
  tiktok?: { privacy_level: TiktokPrivacyLevel; allow_comment: boolean; allow_duet?: boolean | undefined; allow_stitch?: boolean | undefined } | null;
  /**
   * What this job already did on the network (saved with `saveProgress` by an earlier run that may have been
   * cut off): e.g. the chain index reached and the last media id, or a resumable upload session. Null at first.
   */
  progress: Record<string, unknown> | null;
  /**
   * Records progress durably before the next step, so a run taken over after a crash resumes instead of
   * repeating a step whose outcome is unknown. Resolves false when the job's lease was lost (stop working).
   */
  saveProgress(progress: Record<string, unknown>): Promise<boolean>;
}

/** An expected failure, as a value (house style 5): the worker branches on `retryable`. */
export interface NetworkFailure {
  ok: false;
  code: JobErrorCode;
  retryable: boolean;
  /** Our own words; a network's raw text is logged, never shown. */
  message: string;
  /** Part of the publication is public despite the failure (a chain stopped half way): it is not refunded. */
  partlyLive?: boolean;
  /**
   * A retryable failure for which the network said when trying again can succeed (a rate limit's announced
   * reset): the retry waits at least this long, instead of spending attempts before the reset.
   */
  retryAfterMs?: number;
}

/** The network is still processing (a container or an upload): ask again after `retryAfterMs`. */
export interface NotReady {
  ok: 'pending';
  retryAfterMs: number;
}

export type Submitted = { ok: true; containerId: string } | NetworkFailure;
export type Published = { ok: true; postId: string; url?: string } | NotReady | NetworkFailure;
export type Confirmation =
  /**
   * The post is live at `url`. `notice`, when set, is what its author should know although it went out (our
   * words, never the network's text): YouTube keeping an upload private, for one.
   */
  | { state: 'found'; url: string; notice?: string }
  | { state: 'pending' }
  | { state: 'not_found' }
  | { state: 'unavailable' };

/**
 * One network. Publishing is split so that a crash between steps never posts twice: `submit` creates a
 * container or upload (nothing public yet), `publish` turns it into a post and must be safe to call again for
 * the same container (look the state up rather than re-creating), `confirm` looks the post up.
 */
export interface NetworkAdapter {
  submit(req: PublishRequest): Promise<Submitted>;
  publish(req: PublishRequest, containerId: string): Promise<Published>;
  confirm(req: PublishRequest, postId: string, context: { late: boolean }): Promise<Confirmation>;
}
