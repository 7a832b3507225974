/** Path segments and query strings as the fuzzer writes them, lone surrogates included. */

/** Lone surrogates cannot be encoded by encodeURIComponent; send their (invalid) UTF-8 form instead. */
export function encodeSegment(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const cu = value.charCodeAt(i);
    const isHigh = cu >= 0xd800 && cu <= 0xdbff;
    const isLow = cu >= 0xdc00 && cu <= 0xdfff;
    const next = value.charCodeAt(i + 1);
    if (isHigh && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(value.slice(i, i + 2));
      i++;
    } else if (isHigh || isLow) {
      out += [0xe0 | (cu >> 12), 0x80 | ((cu >> 6) & 0x3f), 0x80 | (cu & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(value[i] ?? '');
    }
  }
  return out;
}

export function queryString(pairs: readonly (readonly [string, string])[]): string {
  return pairs.map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`).join('&');
}

export function joinQuery(a: string, b: string): string {
  return a === '' ? b : b === '' ? a : `${a}&${b}`;
}
