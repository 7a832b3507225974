import type { NextFunction, Request, Response } from 'express';

export type Handler = (req: Request, res: Response, next: NextFunction) => unknown;

/**
 * Runs a chain of middleware as Express would: in order, a thrown error or rejected promise goes to `done`.
 * The doors dispatch their own paths with it instead of a router layer per step, whose walk cost more per
 * request than the steps themselves.
 */
export function runChain(chain: readonly Handler[], req: Request, res: Response, done: NextFunction): void {
  let index = 0;
  const step = (err?: unknown): void => {
    if (err !== undefined && err !== null) {
      done(err);
      return;
    }
    const handler = chain[index++];
    if (handler === undefined) {
      done();
      return;
    }
    try {
      const result = handler(req, res, step);
      if (result instanceof Promise) result.then(undefined, (e: unknown) => done(e ?? new Error('Rejected promise')));
    } catch (e) {
      done(e);
    }
  };
  step();
}
