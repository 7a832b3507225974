import { JOB_ERROR_MESSAGES, type JobErrorCode } from '../vocabulary/job-errors.js';
import type { ServiceError } from '../core/errors.js';
import { PLATFORMS, type PlatformSlug } from '../vocabulary/platforms.js';
import { METER_WORDS, meterWord } from './words.js';

/** Meter names of spec 7.3 in words (the shared label map in words.ts). */
export const METER_LABELS: Record<string, string> = METER_WORDS;

export function meterLabel(meter: string): string {
  return meterWord(meter);
}

export function platformName(slug: string): string {
  return slug in PLATFORMS ? PLATFORMS[slug as PlatformSlug].name : slug;
}

/** A job's error code (spec 7.4) in words. */
export function explainJobError(code: string | null): string | null {
  if (code === null) return null;
  return code in JOB_ERROR_MESSAGES ? JOB_ERROR_MESSAGES[code as JobErrorCode] : `The network answered ${code}.`;
}

/**
 * A refused request in words, with what to do: the service's own message plus the action spec 7.2 and 7.3
 * prescribe (e.g. which slot to free for `limit_reached` with `desativar_outra`).
 */
export function explainServiceError(err: ServiceError): string {
  const extra = err.extra;
  switch (err.code) {
    case 'limit_reached': {
      const meter = meterLabel(String(extra.meter ?? ''));
      const how =
        extra.resolve === 'desativar_outra'
          ? 'Free a slot by deactivating or deleting one (Brands & connections, Webhooks), or move to a larger plan.'
          : 'The count resets at the end of the plan cycle; a larger plan raises the ceiling.';
      return `${meter}: the plan allows ${String(extra.limit)} and ${String(extra.used)} are used. ${how}`;
    }
    case 'saldo_insuficiente':
      return `Not enough credits: this costs ${String(extra.custo_estimado)} and ${String(extra.saldo_disponivel)} are available. Buy credits in the Wallet, or pay with the Plan while it covers you.`;
    case 'saldo_fragmentado':
      return `Your balance is enough in total, but the charge must come from one credit batch and the largest holds ${String(extra.maior_lote_disponivel)}. Buy credits or wait for a batch to be used or expire.`;
    case 'lote_vencido':
      return 'The credit batch expired at the very moment of the charge. Nothing was spent: send it again.';
    case 'operacao_sem_preco':
      return 'This operation has no published price, so it cannot be paid with credits. Contact support.';
    case 'rate_limited':
      return 'Too many requests for this workspace in the last minute. Wait a moment and try again.';
    default:
      return err.message;
  }
}
