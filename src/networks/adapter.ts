import type { JobErrorCode } from '../core/contents/sandbox-outcomes.js';
import type { ContentType, PlatformSlug } from './limits.js';

/** What a network needs to publish one job. */
export interface PublishRequest {
  jobId: string;
  attempt: number;
  platform: PlatformSlug;
  connection: { id: string; mode: 'sandbox' | 'live'; name: string };
  contentType: ContentType;
  text: string | null;
  title: string | null;
  thread: string[] | null;
  media: { url: string; sizeBytes: number | null }[];
  /** Forced outcome on sandbox connections. */
  sandboxOutcome: string | null;
}

/** An expected failure, as a value (house style 5): the worker branches on `retryable`. */
export interface NetworkFailure {
  ok: false;
  code: JobErrorCode;
  retryable: boolean;
  /** Our own words; a network's raw text is logged, never shown. */
  message: string;
}

export type Submitted = { ok: true; containerId: string } | NetworkFailure;
export type Published = { ok: true; postId: string } | NetworkFailure;
export type Confirmation =
  | { state: 'found'; url: string }
  | { state: 'pending' }
  | { state: 'not_found' }
  | { state: 'unavailable' };

/**
 * One network. Publishing is split so that a crash between steps never posts twice: `submit` creates a
 * container (nothing public yet), `publish` turns a container into a post and is idempotent per container,
 * `confirm` looks the post up.
 */
export interface NetworkAdapter {
  submit(req: PublishRequest): Promise<Submitted>;
  publish(req: PublishRequest, containerId: string): Promise<Published>;
  confirm(req: PublishRequest, postId: string, context: { late: boolean }): Promise<Confirmation>;
}
