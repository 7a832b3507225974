import { NETWORK_ERROR_CODES } from './job-errors.js';

/**
 * Outcomes an integrator can force on a sandbox connection with `sandbox_outcomes` (documented in the README
 * and the OpenAPI document).
 */
export const SANDBOX_OUTCOMES = ['published', ...NETWORK_ERROR_CODES, 'upstream_5xx_then_published', 'late_confirmation'] as const;
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
