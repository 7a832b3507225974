import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { DEFAULT_PLANS, type Plan, planSchema } from '../core/meters/plans.js';
import { DEFAULT_OFFERS, DEFAULT_PRICES, type Offer, offerSchema, type PriceTable, priceTableSchema } from '../core/wallet/prices.js';
import { ConfigError } from './errors.js';

/**
 * Plans, prices and offers: the business tables. They come from the optional `CONFIG_FILE` (JSON, or YAML when
 * the name ends in .yaml or .yml), or from `PLANS_JSON`, `PRICES_JSON` and `OFFERS_JSON` as before. Both are
 * checked with the core's own schemas, and a refusal names the file (or variable) and the field.
 */

export interface BusinessTables {
  plans: Record<string, Plan>;
  prices: PriceTable;
  offers: Offer[];
}

const plansSchema = z.record(z.string(), planSchema);
const offersSchema = z.array(offerSchema).min(1);
const fileSchema = z.strictObject({ plans: plansSchema.optional(), prices: priceTableSchema.optional(), offers: offersSchema.optional() });

interface BusinessInputs {
  CONFIG_FILE?: string | undefined;
  PLANS_JSON?: string | undefined;
  PRICES_JSON?: string | undefined;
  OFFERS_JSON?: string | undefined;
}

/** @throws ConfigError naming CONFIG_FILE (with the file and field) or the JSON variable. */
export function businessTables(e: BusinessInputs): BusinessTables {
  const file = e.CONFIG_FILE === undefined ? {} : readConfigFile(e.CONFIG_FILE);
  const pick = <T>(key: keyof typeof file, variable: keyof BusinessInputs, text: string | undefined, schema: z.ZodType<T>): T | undefined => {
    if (text !== undefined && file[key] !== undefined) {
      throw new ConfigError(variable, `${variable} and the "${key}" of CONFIG_FILE ${e.CONFIG_FILE} are both set: keep one`);
    }
    return text === undefined ? (file[key] as T | undefined) : parseJsonSetting(variable, text, schema);
  };
  // Plans given are merged over the built-in ones, so a deployment can add one plan without restating the rest.
  const plans = { ...DEFAULT_PLANS, ...pick('plans', 'PLANS_JSON', e.PLANS_JSON, plansSchema) };
  const prices = { ...DEFAULT_PRICES, ...pick('prices', 'PRICES_JSON', e.PRICES_JSON, priceTableSchema) };
  const offers = pick('offers', 'OFFERS_JSON', e.OFFERS_JSON, offersSchema) ?? DEFAULT_OFFERS;
  return { plans, prices, offers };
}

function readConfigFile(path: string): z.infer<typeof fileSchema> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError('CONFIG_FILE', `CONFIG_FILE ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const yaml = /\.ya?ml$/i.test(path);
  let value: unknown;
  try {
    value = yaml ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ConfigError('CONFIG_FILE', `CONFIG_FILE ${path} is not valid ${yaml ? 'YAML' : 'JSON'}: ${reason}`);
  }
  const checked = fileSchema.safeParse(value ?? {});
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const field = issue?.path.join('.') || '(top level)';
    throw new ConfigError('CONFIG_FILE', `CONFIG_FILE ${path}: ${field} ${issue?.message ?? 'is invalid'}`);
  }
  return checked.data;
}

/** A JSON-valued setting, checked with its schema. @throws ConfigError naming the variable. */
function parseJsonSetting<T>(variable: string, text: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigError(variable, `${variable} must be valid JSON`);
  }
  const checked = schema.safeParse(value);
  if (!checked.success) throw new ConfigError(variable, `${variable} ${checked.error.issues[0]?.message ?? 'is invalid'} at ${checked.error.issues[0]?.path.join('.') ?? ''}`);
  return checked.data;
}
