import type { z } from 'zod';

/**
 * zod's issues in words for people: a predicate about the field ("is required", "must be one of text, photo"),
 * without its path, so a door can put the field name in front ("brand_id is required"), a form can show it next
 * to its field and the configuration can say "PORT must be an integer". Installed as zod's `customError`, which
 * only speaks where a schema has no message of its own: the core's own sentences are kept as written.
 */

type Issue = z.core.$ZodRawIssue;

const ARTICLE_TYPES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  date: 'a date',
  null: 'null',
  file: 'a file',
  symbol: 'a symbol',
  function: 'a function',
  map: 'an object',
  record: 'an object',
  set: 'an array',
  tuple: 'an array',
  nan: 'NaN',
};

const FORMATS: Record<string, string> = {
  email: 'an email address',
  url: 'a URL (https://…)',
  uuid: 'a UUID',
  datetime: 'an ISO 8601 date-time such as 2026-03-01T09:00:00Z',
  date: 'a date such as 2026-03-01',
  time: 'a time such as 09:00',
  duration: 'an ISO 8601 duration',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  base64: 'base64 text',
  base64url: 'base64url text',
  json_string: 'JSON text',
  jwt: 'a JWT',
};

const UNITS: Record<string, [string, string]> = {
  string: ['character', 'characters'],
  array: ['item', 'items'],
  set: ['item', 'items'],
  map: ['entry', 'entries'],
  file: ['byte', 'bytes'],
};

/** A value as a person would type it: strings bare, everything else as JSON. */
function shown(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'bigint' ? String(value) : JSON.stringify(value);
}

function plural(n: number | bigint, [one, many]: [string, string]): string {
  return `${String(n)} ${Number(n) === 1 ? one : many}`;
}

function sizeMessage(issue: Extract<Issue, { code: 'too_big' | 'too_small' }>): string {
  const big = issue.code === 'too_big';
  const bound = big ? issue.maximum : issue.minimum;
  const units = issue.origin === undefined ? undefined : UNITS[issue.origin];
  if (units !== undefined) {
    if (!big && Number(bound) === 1 && issue.inclusive !== false) return issue.origin === 'string' ? 'must not be empty' : 'must have at least 1 item';
    const verb = issue.origin === 'string' || issue.origin === 'file' ? 'be' : 'have';
    if (issue.exact === true) return `must ${verb} exactly ${plural(bound, units)}`;
    // An exclusive bound in units is the next whole count: fewer than 10 characters is at most 9.
    const whole = issue.inclusive === false ? Number(bound) + (big ? -1 : 1) : bound;
    return `must ${verb} at ${big ? 'most' : 'least'} ${plural(whole, units)}`;
  }
  if (issue.origin === 'date') return `must be ${big ? 'on or before' : 'on or after'} ${shown(bound)}`;
  if (issue.exact === true) return `must be exactly ${shown(bound)}`;
  if (issue.inclusive === false) return `must be ${big ? 'less' : 'greater'} than ${shown(bound)}`;
  return `must be at ${big ? 'most' : 'least'} ${shown(bound)}`;
}

function formatMessage(issue: Extract<Issue, { code: 'invalid_format' }>): string {
  const extra = issue as { prefix?: string; suffix?: string; includes?: string };
  switch (issue.format) {
    case 'starts_with':
      return `must start with ${extra.prefix ?? ''}`;
    case 'ends_with':
      return `must end with ${extra.suffix ?? ''}`;
    case 'includes':
      return `must contain ${extra.includes ?? ''}`;
    case 'regex':
    case 'template_literal':
      return 'is not in the expected format';
    default:
      return `must be ${FORMATS[issue.format] ?? `a valid ${issue.format}`}`;
  }
}

/**
 * The predicate for one issue, or undefined for an issue that keeps zod's wording (none today). `invalid_type`
 * needs the input (present while zod finalizes an issue, dropped afterwards) to tell a missing field from a wrong one.
 */
export function issuePredicate(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return issue.expected === 'undefined' || issue.expected === 'never' ? 'is not accepted here' : 'is required';
      if (issue.expected === 'never' || issue.expected === 'undefined') return 'is not accepted here';
      return `must be ${ARTICLE_TYPES[issue.expected] ?? issue.expected}`;
    }
    case 'invalid_value': {
      const base = issue.values.length === 1 ? `must be ${shown(issue.values[0])}` : `must be one of ${issue.values.map(shown).join(', ')}`;
      // Slugs and codes are lower case; "Threads" is the likeliest slip, so name the value meant.
      const lower = typeof issue.input === 'string' ? issue.input.toLowerCase() : undefined;
      return lower !== undefined && lower !== issue.input && issue.values.includes(lower) ? `${base} (lower case: ${lower})` : base;
    }
    case 'too_big':
    case 'too_small':
      return sizeMessage(issue);
    case 'invalid_format':
      return formatMessage(issue);
    case 'not_multiple_of':
      return `must be a multiple of ${shown(issue.divisor)}`;
    case 'unrecognized_keys':
      return `has unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.join(', ')}`;
    case 'invalid_key':
      return 'has a key that is not accepted';
    case 'invalid_element':
      return 'has a value that is not accepted';
    case 'invalid_union': {
      const options = (issue as { options?: unknown[] }).options;
      if (Array.isArray(options) && options.length > 0) return `must be one of ${options.map(shown).join(', ')}`;
      return 'does not match any accepted form';
    }
    default:
      return 'is not valid';
  }
}

/**
 * The predicates an issue could have received, once zod has finalized it (and dropped its input): the caller
 * compares against them to tell our wording from a schema's own message.
 */
export function possiblePredicates(issue: z.core.$ZodIssue): string[] {
  if (issue.code === 'invalid_type') {
    return [issuePredicate({ ...issue, input: undefined }), issuePredicate({ ...issue, input: null })];
  }
  if (issue.code === 'invalid_value') {
    const base = issuePredicate({ ...issue, input: undefined });
    return [base, ...issue.values.filter((v) => typeof v === 'string').map((v) => `${base} (lower case: ${v})`)];
  }
  return [issuePredicate(issue as Issue)];
}
