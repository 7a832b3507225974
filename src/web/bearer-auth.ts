import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { WindowCount, WorkspaceHit } from '../../db/repositories/rate-limits.repo.js';
import type { RateDecision, RateLimiter } from './rate-limiter.js';

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
  /**
   * `apiKey`, also counting `hit` on the key's workspace budget in the same statement. Offered where the
   * database can do both at once (PostgreSQL); elsewhere the rate limit counts in a statement of its own.
   */
  apiKeyCounting?(presented: string, hit: WorkspaceHit): Promise<{ principal: Principal; window: WindowCount }>;
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

/** Whether a token goes to the API key authenticator: it has a key's shape, or no OAuth verifier is offered. */
function isApiKeyFor(token: string, auth: Authenticators): boolean {
  return token.startsWith('svc_live_') || auth.oauthToken === undefined;
}

async function principalOfToken(token: string, auth: Authenticators): Promise<Principal> {
  const verify = auth.oauthToken;
  if (verify === undefined || isApiKeyFor(token, auth)) return auth.apiKey(token);
  const principal = await verify(token);
  if (principal === null) throw invalidKey();
  return principal;
}

export async function resolvePrincipal(authorization: string | undefined, auth: Authenticators): Promise<Principal> {
  return principalOfToken(bearerToken(authorization), auth);
}

/**
 * Resolves the caller into `res.locals.principal`. Given the limiter that the next step (`rateLimit`) charges, an
 * API key on a database that can count it in its own lookup is charged here, in that statement, and the decision
 * is left for `rateLimit` to apply (one statement fewer on every request made with a key).
 */
export function authenticate(auth: Authenticators, limiter?: RateLimiter) {
  const count = auth.apiKeyCounting;
  const counting = limiter === undefined || count === undefined ? undefined : { limiter, count };
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const token = bearerToken(req.get('authorization'));
    if (counting !== undefined && isApiKeyFor(token, auth)) {
      const { principal, window } = await counting.count(token, counting.limiter.hit());
      res.locals.principal = principal;
      res.locals.rateDecision = counting.limiter.decide(window);
    } else {
      res.locals.principal = await principalOfToken(token, auth);
    }
    next();
  };
}

/**
 * The decision `authenticate` made for this request's budget if it counted the request itself, handed over once:
 * a later charge on the same request (the further messages of an MCP batch) counts anew.
 */
export function takeDecidedRate(res: Response): RateDecision | undefined {
  const decision = res.locals.rateDecision as RateDecision | undefined;
  res.locals.rateDecision = undefined;
  return decision;
}

export function principalOf(res: Response): Principal | null {
  return (res.locals.principal as Principal | undefined) ?? null;
}
