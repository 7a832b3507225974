import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';

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

/** Resolves the caller into `res.locals.principal`; the rate limit, the next step, counts it there. */
export function authenticate(auth: Authenticators) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    res.locals.principal = await resolvePrincipal(req.get('authorization'), auth);
    next();
  };
}

export function principalOf(res: Response): Principal | null {
  return (res.locals.principal as Principal | undefined) ?? null;
}
