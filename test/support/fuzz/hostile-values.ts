/**
 * The fuzzer's catalogue of hostile values: strings, keys, URLs, numbers, JSON syntax, bytes, content types and
 * encodings, path segments and query strings that have broken parsers and services before.
 */

/** Strings that have hurt someone somewhere: unicode edge cases, injections, separators, reserved names. */
export const ODD_STRINGS: readonly string[] = [
  '',
  ' ',
  '😀',
  '👩‍👩‍👧‍👦🏳️‍🌈',
  '\u202Eevil\u202C.txt',
  'שלום עולם',
  'مرحبا',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\ud83dx\ude00',
  '\ufeffbom',
  '\u200b\u200c\u200d',
  'e\u0301\u0301\u0301',
  '\uffff\ufffe',
  '\u2028\u2029',
  '\r\n\r\nX-Injected: 1',
  '\t',
  '%00',
  '%',
  '../../../../etc/passwd',
  "' OR '1'='1' --",
  '"; DROP TABLE brands; --',
  '<script>alert(1)</script>',
  '${7*7}{{7*7}}',
  '__proto__',
  'constructor',
  'null',
  'undefined',
  'NaN',
  '-1',
  '0',
  '1e309',
  'true',
  '[]',
  '{}',
  'Ω≈ç√∫˜µ≤≥÷',
  'Ｔｈｅ ｑｕｉｃｋ',
  '\u0130\u0131ß',
  'A'.repeat(257),
];

/** Names every plain JavaScript object answers to: a lookup by user input in a plain object finds them. */
export const PROTOTYPE_NAMES: readonly string[] = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__'];

/** Object keys worth adding where none is expected. */
export const EXTRA_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '$where', '', ' ', 'id', 'workspace_id', 'admin', 'a'.repeat(1000), '😀', '\u0000'];

/** Addresses a fuzzer may give a server that fetches them: never public, never slow (no routable host). */
export const ODD_URLS: readonly string[] = [
  'https://127.0.0.1/a.jpg',
  'https://[::1]/x',
  'https://169.254.169.254/latest/meta-data/',
  'https://10.0.0.1/hook',
  'https://localhost/x',
  'https://0x7f000001/',
  'https://2130706433/',
  'https://[::ffff:127.0.0.1]/',
  'http://media.invalid/plain-http.jpg',
  'https://user:pass@media.invalid/',
  'ftp://media.invalid/f.jpg',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'data:image/png;base64,AAAA',
  'https://media.invalid:99999/',
  'https://media.invalid/%00',
  'https://xn--80ak6aa92e.invalid/',
  'https://exa mple.invalid/',
  '//media.invalid/x',
  'https://',
  'not a url',
];

export const RAW_NUMBERS = ['1e309', '-1e309', '-0', '1e-400', '9007199254740993', '123456789012345678901234567890123456789', '0.1e1', '1.0', '-1', '2147483648', '-2147483649', '4294967296', 'NaN', 'Infinity', '-Infinity', '0x10', '1_000', '01', '+1', '.5', '5.'];

export const SYNTAX_BREAKERS: readonly ((text: string) => string)[] = [
  (t) => `${t},`,
  (t) => t.replace(/}$/, ',}'),
  (t) => t.replace(/"/g, "'"),
  (t) => `/* c */${t}`,
  (t) => `${t}// c`,
  (t) => `\ufeff${t}`,
  (t) => `)]}',\n${t}`,
  (t) => `${t}${t}`,
  (t) => `${t}\u0000`,
  (t) => t.replace(/"([a-z_]+)":/, '$1:'),
  () => '',
  () => ' \n\t ',
  () => 'null',
  () => '[]',
  () => '"string"',
  () => '0',
  () => 'true',
  () => '{',
  () => '}',
  () => '{"a":1}}',
  () => '{"a":"\\x41"}',
  () => '{"a":"\\u12"}',
  () => '{"a":"\\ud800\\u0041"}',
];

export const BAD_UTF8: readonly number[][] = [[0xff], [0xfe, 0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x00]];

export const ODD_CONTENT_TYPES: readonly (string | null)[] = [
  null,
  '',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=fuzz',
  'application/xml',
  'application/json; charset=utf-16',
  'application/json; charset=utf-32le',
  'application/json; charset=latin1',
  'application/json; charset=bogus',
  'application/json; charset=utf-8',
  'application/json; charset="UTF-8"',
  'application/vnd.api+json',
  'application/merge-patch+json',
  'APPLICATION/JSON',
  'application/json;;;',
  'application/json; a',
  'application/json, text/plain',
  'application/jsonx',
  '*/*',
  'json',
  'image/png',
  `application/json; x=${'y'.repeat(4000)}`,
];

export const CONTENT_ENCODINGS = ['gzip', 'x-gzip', 'deflate', 'br', 'identity', 'compress', 'zstd', 'gzip, gzip', 'bogus', '*', 'IDENTITY'];

export const RAW_SEGMENTS = ['%', '%zz', '%E0%A4%A', '%C0%AF', '%ED%A0%80', '%FF', '%00', '%2e%2e', '..', '.', '%2F', '%5C', ';', ';a=b', '%252F', '~', '*', '%20', '%u0041'];

export const RAW_QUERIES = ['%', '%zz', '%E0%A4%A', '&&&', '=', '==x', 'a=%00', ';', '+', '%2B=%2B', '?', 'a[b]=1', 'a[]=1&a[]=2', '__proto__=x', '__proto__[admin]=1', 'constructor[prototype][x]=1', 'toString=1', 'hasOwnProperty=1', '&=&=', 'a=1&a=2&a=3'];

export const QUERY_VALUES: readonly string[] = [...RAW_NUMBERS, 'true', 'false', 'yes', '', ' ', '[]', '{}', 'null', '2026-02-30T25:61:61Z', '0000-00-00T00:00:00Z', '9999-12-31T23:59:59.999Z', '-271821-04-20T00:00:00Z', '2026-01-01', '1700000000', 'eyJ4IjoxfQ', 'Li4v', '!@#$'];
