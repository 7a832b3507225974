/** The spec's job error codes (7.4), shared by the networks that produce them, the core and every door. */
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
