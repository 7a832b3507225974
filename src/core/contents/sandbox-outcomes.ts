/**
 * Outcomes an integrator can force on a sandbox connection with `sandbox_outcomes` (documented in the README
 * and the OpenAPI document).
 */
export const JOB_ERROR_CODES = [
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
export type JobErrorCode = (typeof JOB_ERROR_CODES)[number];

/** Spec 7.4: the confirmation failures, whose post may be live; only these are checked again later. */
export const CONFIRMATION_ERROR_CODES: readonly JobErrorCode[] = ['confirmacao_esgotada', 'confirmacao_indisponivel', 'post_inexistente'];

export const SANDBOX_OUTCOMES = ['published', ...JOB_ERROR_CODES, 'upstream_5xx_then_published', 'late_confirmation'] as const;
export type SandboxOutcome = (typeof SANDBOX_OUTCOMES)[number];

export const SANDBOX_OUTCOME_DESCRIPTIONS: Record<SandboxOutcome, string> = {
  published: 'Published and confirmed on the first check (the default).',
  token_expired: 'The network refuses the token; the connection becomes expired and a connection.expired event is recorded.',
  permission_revoked: 'The user removed the permission at the network; the connection becomes expired.',
  media_unsupported_format: 'The network refuses the media format.',
  media_too_large: 'The network refuses the file as too large.',
  quota_exceeded: "The network's own daily quota is reached.",
  upstream_5xx: 'The network answers 5xx on every attempt; retried automatically, then failed.',
  upstream_unknown: 'The network answers with an error nobody documented.',
  confirmacao_esgotada: 'Accepted, but never confirmed before the deadline.',
  confirmacao_indisponivel: 'Accepted, but the network cannot be asked about the post before the deadline.',
  post_inexistente: 'Accepted, then not found on two consecutive checks.',
  upstream_5xx_then_published: 'The first attempt gets a 5xx; the automatic retry publishes.',
  late_confirmation: 'Fails with confirmacao_esgotada, then confirms on a later check: the job turns published (corrected).',
};

/** Spec 7.4 in our own words, for job error messages. */
export const JOB_ERROR_MESSAGES: Record<JobErrorCode, string> = {
  token_expired: 'The connection to the network expired. Reconnect it; jobs on it fail until then.',
  permission_revoked: 'The account removed the permissions this service needs. Reconnect it.',
  media_unsupported_format: 'The network refused the media format. Use JPEG or PNG for photos and MP4 for video (9:16 for reels and shorts).',
  media_too_large: 'The file is over the network limit.',
  quota_exceeded: "The account reached the network's own publishing quota; it usually resets at midnight UTC.",
  upstream_5xx: 'The network kept failing on its side after automatic retries.',
  upstream_unknown: 'The network answered with an unexpected error. Report it with the job_id.',
  confirmacao_esgotada: 'The network did not confirm the post before the deadline. It may be live: check before republishing.',
  confirmacao_indisponivel: 'The network could not be asked about the post before the deadline. It may be live: check before republishing.',
  post_inexistente: 'The post was not found on two consecutive checks. It may still appear: check before republishing.',
};
