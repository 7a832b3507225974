import { isRecord, list, obj, str } from '../kit/json.js';

/**
 * Where a Bluesky account lives. After sign-in every repository call goes to the account's own data server (PDS),
 * named in its DID document, not to the sign-in service (bsky.social is an "entryway" in front of many PDS hosts).
 * The connection keeps both in its account id: `${pdsOrigin}|${did}`.
 */
export interface BlueskyAccount {
  /** The PDS origin, e.g. `https://morel.us-east.host.bsky.network`. */
  pds: string;
  /** The account's DID (`did:plc:…` or `did:web:…`), the repo every record is written to. */
  did: string;
}

const DID = /^did:[a-z]+:[a-zA-Z0-9._:%-]+$/;

/** The account id a connection keeps (see LiveCredentials.accountId). */
export const accountIdOf = (a: BlueskyAccount): string => `${a.pds}|${a.did}`;

/** Reads `${pdsOrigin}|${did}`; null when it is not one (a connection made before this format, or corrupted). */
export function parseAccountId(accountId: string): BlueskyAccount | null {
  const bar = accountId.lastIndexOf('|');
  if (bar < 0) return null;
  const pds = originOf(accountId.slice(0, bar));
  const did = accountId.slice(bar + 1);
  return pds && DID.test(did) ? { pds, did } : null;
}

/** The http(s) origin of an address, or null. */
export function originOf(address: string): string | null {
  try {
    const url = new URL(address);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : null;
  } catch {
    return null;
  }
}

/**
 * The PDS endpoint of a DID document (atproto.com/specs/did: the service whose id ends in `#atproto_pds`, of
 * type AtprotoPersonalDataServer). Only a document about `did` itself is believed.
 */
export function pdsFromDidDoc(didDoc: unknown, did: string): string | null {
  const doc = obj(didDoc);
  if (str(doc.id) !== did) return null;
  const service = list(doc.service)
    .filter(isRecord)
    .find((s) => (str(s.id) === '#atproto_pds' || str(s.id) === `${did}#atproto_pds`) && str(s.type) === 'AtprotoPersonalDataServer');
  const endpoint = service ? str(service.serviceEndpoint) : null;
  return endpoint ? originOf(endpoint) : null;
}

/**
 * The `exp` claim of a JWT in epoch ms, read from its payload without verifying it (it is the server's own token,
 * only used to know when to renew). Null when it has none.
 */
export function jwtExpiry(jwt: string): number | null {
  const payload = jwt.split('.')[1];
  if (!payload) return null;
  try {
    const exp = obj(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : null;
  } catch {
    return null;
  }
}

/** `did:web` of a host, for service-auth audiences (a port's colon is percent-encoded, as did:web asks). */
export const didWebOf = (origin: string): string => `did:web:${new URL(origin).host.replace(':', '%3A')}`;
