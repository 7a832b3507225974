import { CYCLE_METER } from '../core/meters/plans.js';
import { OPERATION } from '../core/wallet/prices.js';
import { PAYMENT_MODE, type PaymentMode } from '../core/wallet/wallet.schema.js';

/**
 * The product's words in the interface. The API keeps the spec's wire codes (spec 7.2–7.4: `modo plano`,
 * `publicacoes`, `lote`…); a person reading the dashboard sees these English names instead. Every page takes its
 * labels from here so one term reads the same everywhere.
 */

/** Payment modes (the API's `modo`, spec 4.5) by their English names. */
export const MODE_WORDS: Record<PaymentMode, string> = {
  [PAYMENT_MODE.plan]: 'Plan',
  [PAYMENT_MODE.credits]: 'Credits',
  [PAYMENT_MODE.automatic]: 'Plan, then credits',
};

/** The longer form, for a choice in a form. */
export const MODE_CHOICES: Record<PaymentMode, string> = {
  [PAYMENT_MODE.plan]: 'Plan — refused when this cycle’s allowance is used up',
  [PAYMENT_MODE.credits]: 'Credits — every publication is paid in credits',
  [PAYMENT_MODE.automatic]: 'Plan, then credits — the plan while it lasts, then credits',
};

/** Meters of spec 7.3 in words. */
export const METER_WORDS: Record<string, string> = {
  brands: 'Brands',
  connections: 'Connections',
  media_storage: 'Media storage',
  webhooks: 'Webhook endpoints',
  inspiration_library: 'Inspiration library',
  [CYCLE_METER.contentCreations]: 'Content creations this cycle',
  [CYCLE_METER.publications]: 'Publications this cycle',
};

/**
 * Meters the spec lists for features this product does not have: the API reports them (spec 7.3), the interface
 * does not show them, since a meter of a feature nobody can use only raises questions.
 */
export const HIDDEN_METERS: ReadonlySet<string> = new Set(['inspiration_library']);

/** Whether the interface shows this meter. */
export function meterShown(meter: string): boolean {
  return !HIDDEN_METERS.has(meter);
}

export function meterWord(meter: string): string {
  return METER_WORDS[meter] ?? meter;
}

/** Priced operations (`operacao` of the wallet) by their English names. */
export const OPERATION_WORDS: Record<string, string> = {
  [OPERATION.publication]: 'Publication',
  [CYCLE_METER.publications]: 'Publication',
  [OPERATION.contentCreation]: 'Content creation',
  [CYCLE_METER.contentCreations]: 'Content creation',
};

export function operationWord(operation: string): string {
  return OPERATION_WORDS[operation] ?? operation;
}

/** A credit batch (`lote`) is a "batch" in the interface. */
export const BATCH_WORD = 'batch';

export function modeWord(mode: string): string {
  return mode in MODE_WORDS ? MODE_WORDS[mode as PaymentMode] : mode;
}

/**
 * What a per-cycle meter counts, in one sentence: the numbers "2 of 2,000" alone do not say what makes them move.
 * Charging happens when a post starts publishing (spec 7.3; see the core's chargeStart), so drafts and posts still
 * waiting for their time count nothing yet.
 */
export const METER_EXPLANATIONS: Record<string, string> = {
  [CYCLE_METER.contentCreations]:
    'One for each post when it starts publishing, however many networks it goes to. Drafts and posts waiting for their time do not count yet.',
  [CYCLE_METER.publications]: 'One for each network a post goes out to: a post to three networks counts three.',
};

/** The sentence explaining a meter, or null when there is none. */
export function meterExplanation(meter: string): string | null {
  return METER_EXPLANATIONS[meter] ?? null;
}

/**
 * A price as the English interface writes it, with the ISO currency code rather than a symbol: "BRL 49.00",
 * "USD 9.50". A symbol such as "R$" or "$" is ambiguous to a reader who does not already know the currency, and
 * the rest of the page (numbers, dates) is English, so the reader's locale is not used either. An unknown currency
 * code reads as "49 XYZ".
 */
export function price(amount: number, currency: string): string {
  try {
    // Intl puts a no-break space (of a width that depends on the ICU version) after the code: one plain space instead.
    return new Intl.NumberFormat('en-US', { style: 'currency', currency, currencyDisplay: 'code' }).format(amount).replace(/\s/g, ' ');
  } catch {
    return `${amount} ${currency}`;
  }
}
