import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../core/errors.js';
import type { Origin, Principal } from '../core/principal.js';
import { locals } from './request-context.js';

/**
 * How a bearer credential becomes a Principal. API keys are recognised by their `svc_live_` shape; anything
 * else is offered to the OAuth verifier (oauth/token-verifier.ts), so REST and MCP accept the same tokens.
 */
export interface Authenticators {
  apiKey(presented: string): Promise<Principal>;
  /**
   * Resolves an OAuth access token. Returns null when the string is not a token we issued (answered as
   * `invalid_api_key`); throws `invalid_token` when it is ours but expired or revoked.
   */
  oauthToken?(presented: string): Promise<Principal | null>;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

function invalidKey(): ServiceError {
  return new ServiceError('invalid_api_key', 'The API key is missing, malformed, revoked or unknown. Send Authorization: Bearer <API_KEY>.');
}

/** The bearer token of an `Authorization` header; `invalid_api_key` when there is none. */
function bearerToken(authorization: string | undefined): string {
  const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
  if (token === undefined) throw invalidKey();
  return token;
}

async function principalOfToken(token: string, auth: Authenticators): Promise<Principal> {
  const verify = auth.oauthToken;
  if (verify === undefined || token.startsWith('svc_live_')) return auth.apiKey(token);
  const principal = await verify(token);
  if (principal === null) throw invalidKey();
  return principal;
}

export async function resolvePrincipal(authorization: string | undefined, auth: Authenticators): Promise<Principal> {
  return principalOfToken(bearerToken(authorization), auth);
}

/**
 * Where a request comes from, for the audit log: the client's address as Express reads it (`req.ip`, which
 * believes `X-Forwarded-For` only from the proxies TRUST_PROXY names), its user agent and the request's id.
 */
export function originOf(req: Request, res: Response, via: Origin['via']): Origin {
  return { ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null, requestId: locals(res).requestId ?? null, via };
}

/**
 * Resolves the caller into `res.locals.principal`, with the request's origin (`via`: which door); the rate limit,
 * the next step, counts it there. The principal is copied, so a resolved credential another request shares is
 * never marked with this request's origin.
 */
export function authenticate(auth: Authenticators, via: Origin['via'] = 'rest') {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const principal = await resolvePrincipal(req.get('authorization'), auth);
    res.locals.principal = { ...principal, origin: originOf(req, res, via) };
    next();
  };
}

export function principalOf(res: Response): Principal | null {
  return (res.locals.principal as Principal | undefined) ?? null;
}
