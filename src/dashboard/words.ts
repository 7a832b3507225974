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

/** The first language of an Accept-Language header that Intl knows, else en-US. */
export function localeOf(acceptLanguage: string | undefined): string {
  for (const part of (acceptLanguage ?? '').split(',')) {
    const tag = part.split(';')[0]?.trim();
    if (!tag || tag === '*') continue;
    try {
      const [supported] = Intl.NumberFormat.supportedLocalesOf(tag);
      if (supported) return supported;
    } catch {
      // A malformed tag is skipped, as browsers send what users type.
    }
  }
  return 'en-US';
}

/** A price in the reader's locale (`R$ 49,00`, `BRL 49.00`…); an unknown currency code reads as "49 XYZ". */
export function price(amount: number, currency: string, locale = 'en-US'): string {
  try {
    return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount} ${currency}`;
  }
}
