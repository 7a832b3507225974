import type { Modo } from '../core/wallet/wallet.schema.js';

/**
 * The product's words in the interface. The API keeps the spec's wire codes (spec 7.2–7.4: `modo plano`,
 * `publicacoes`, `lote`…); a person reading the dashboard sees these English names instead. Every page takes its
 * labels from here so one term reads the same everywhere.
 */

/** Billing modes (`modo`) by their English names. */
export const MODE_WORDS: Record<Modo, string> = {
  plano: 'Plan',
  creditos: 'Credits',
  automatico: 'Plan, then credits',
};

/** The longer form, for a choice in a form. */
export const MODE_CHOICES: Record<Modo, string> = {
  plano: 'Plan — refused when this cycle’s allowance is used up',
  creditos: 'Credits — every publication is paid in credits',
  automatico: 'Plan, then credits — the plan while it lasts, then credits',
};

/** Meters of spec 7.3 in words. */
export const METER_WORDS: Record<string, string> = {
  brands: 'Brands',
  connections: 'Connections',
  media_storage: 'Media storage',
  webhooks: 'Webhook endpoints',
  inspiration_library: 'Inspiration library',
  criacao_de_conteudos: 'Content creations this cycle',
  publicacoes: 'Publications this cycle',
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
  publicacao: 'Publication',
  publicacoes: 'Publication',
  criacao_de_conteudo: 'Content creation',
  criacao_de_conteudos: 'Content creation',
};

export function operationWord(operation: string): string {
  return OPERATION_WORDS[operation] ?? operation;
}

/** A credit batch (`lote`) is a "batch" in the interface. */
export const BATCH_WORD = 'batch';

export function modeWord(modo: string): string {
  return modo in MODE_WORDS ? MODE_WORDS[modo as Modo] : modo;
}

/**
 * What a per-cycle meter counts, in one sentence: the numbers "2 of 2,000" alone do not say what makes them move.
 * Charging happens when a post starts publishing (spec 7.3; see the core's chargeStart), so drafts and posts still
 * waiting for their time count nothing yet.
 */
export const METER_EXPLANATIONS: Record<string, string> = {
  criacao_de_conteudos: 'One for each post when it starts publishing, however many networks it goes to. Drafts and posts waiting for their time do not count yet.',
  publicacoes: 'One for each network a post goes out to: a post to three networks counts three.',
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
