import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Password hashing with scrypt from Node's own crypto (no native package to build). Parameters are one of the
 * equivalent minimum configurations of OWASP's password storage cheat sheet: N = 2^15, r = 8, p = 3. It costs as
 * much work as N = 2^17, p = 1 but holds 32 MiB instead of 128 MiB while it runs, which matters for a service
 * sized to run in a couple of hundred megabytes. The stored form names its parameters
 * (`scrypt$N$r$p$salt$hash`, base64url), so they can be raised later without breaking stored hashes.
 */
export const PASSWORD_HASH = { N: 2 ** 15, r: 8, p: 3, keyLength: 32, saltLength: 16 } as const;

/** The shortest and longest passwords accepted (NIST SP 800-63B: at least 8, allow at least 64). */
export const PASSWORD_LENGTH = { min: 10, max: 200 } as const;

interface Params {
  N: number;
  r: number;
  p: number;
}

function derive(password: string, salt: Buffer, params: Params, keyLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // Node refuses more than 32 MiB by default; scrypt needs 128 * N * r bytes.
    scrypt(password.normalize('NFKC'), salt, keyLength, { ...params, maxmem: 256 * params.N * params.r }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

// Each hash holds 32 MiB and a core for its duration: at most two at once in a process, the rest wait their turn.
const MAX_CONCURRENT = 2;
let running = 0;
const waiting: (() => void)[] = [];

async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  try {
    return await work();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(PASSWORD_HASH.saltLength);
  const { N, r, p, keyLength } = PASSWORD_HASH;
  const key = await limited(() => derive(password, salt, { N, r, p }, keyLength));
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `password` matches `stored`; a malformed stored value never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await limited(() => derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) }, expected.length));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A hash of nothing anyone knows, computed once: verifying against it when an email is unknown makes that answer
 * take as long as a wrong password's, so timing does not tell which emails have accounts.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
}
