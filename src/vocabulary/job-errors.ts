/**
 * The longest wait a network's announced reset may impose on one retry (X's rate-limit windows are 15 minutes,
 * Bluesky's write points reset hourly): a job waits for a reset up to this far off; a later one is not worth it.
 */
export const MAX_ANNOUNCED_WAIT_MS = 3_600_000;

/** The spec's job error codes (7.4): what a network's answer can fail a job with. */
export const NETWORK_ERROR_CODES = [
  'token_expired',
  'permission_revoked',
  'media_unsupported_format',
  'media_too_large',
  'quota_exceeded',
  'upstream_5xx',
  'upstream_unknown',
  'confirmacao_esgotada',
  'confirmacao_indisponivel',
  'post_inexistente',
] as const;
export type NetworkErrorCode = (typeof NETWORK_ERROR_CODES)[number];

/**
 * Every code a job can fail with, shared by the core and every door: the networks' (7.4), then the scheduler's:
 * a content missed beyond the grace period, or refused by the charge at its time (the 7.2 code).
 */
export const JOB_ERROR_CODES = [
  ...NETWORK_ERROR_CODES,
  'schedule_missed',
  'limit_reached',
  'saldo_insuficiente',
  'saldo_fragmentado',
  'operacao_sem_preco',
] as const;
export type JobErrorCode = (typeof JOB_ERROR_CODES)[number];

/** Spec 7.4: the confirmation failures, whose post may be live; only these are checked again later. */
export const CONFIRMATION_ERROR_CODES: readonly JobErrorCode[] = ['confirmacao_esgotada', 'confirmacao_indisponivel', 'post_inexistente'];

/** Spec 7.4 in our own words, for job error messages. */
export const JOB_ERROR_MESSAGES: Record<JobErrorCode, string> = {
  token_expired: 'The connection to the network expired. Reconnect it; jobs on it fail until then.',
  permission_revoked: 'The account removed the permissions this service needs. Reconnect it.',
  media_unsupported_format: 'The network refused the media format. Use JPEG for photos and MP4 (H.264) for video, which every network takes (9:16 for reels and shorts).',
  media_too_large: 'The file is over the network limit.',
  quota_exceeded: "The account reached the network's own publishing quota; it usually resets at midnight UTC.",
  upstream_5xx: 'The network kept failing on its side after automatic retries.',
  upstream_unknown: 'The network answered with an unexpected error. Report it with the job_id.',
  confirmacao_esgotada: 'The network did not confirm the post before the deadline. It may be live: check before republishing.',
  confirmacao_indisponivel: 'The network could not be asked about the post before the deadline. It may be live: check before republishing.',
  post_inexistente: 'The post was not found on two consecutive checks. It may still appear: check before republishing.',
  schedule_missed: 'The service was down at the scheduled time and for longer than the grace period, so the post was not published late. Publish or schedule it again.',
  limit_reached: "At its scheduled time the plan's meter was at its ceiling, so nothing was published or charged.",
  saldo_insuficiente: 'At its scheduled time the credit balance did not cover it, so nothing was published or charged.',
  saldo_fragmentado: 'At its scheduled time no single credit batch covered it, so nothing was published or charged.',
  operacao_sem_preco: 'At its scheduled time the operation had no published price, so nothing was published or charged.',
};

/** The charge refusals (spec 7.2) a scheduled content's jobs fail with when the content cannot be paid at its time. */
export const CHARGE_ERROR_CODES: readonly JobErrorCode[] = ['limit_reached', 'saldo_insuficiente', 'saldo_fragmentado', 'operacao_sem_preco'];
