import { expect, it } from 'vitest';
import { consumeAuthChallenge, insertAuthChallenge } from '../../db/repositories/auth-challenges.repo.js';
import { describeEachDb } from '../support/server.js';

/**
 * A sign-in ceremony's challenge serves once: the delete that takes it is the claim, so requests presenting the
 * same one in parallel (a replayed passkey answer, a provider's callback opened twice) leave exactly one winner.
 */
describeEachDb('one-time sign-in challenges', (server) => {
  const db = () => server().container.db.kysely;
  const now = () => server().container.clock.now();

  it('twelve parallel consumers of one challenge: one gets it, the others nothing', async () => {
    await insertAuthChallenge(db(), { id: 'chl_parallel', purpose: 'passkey_sign_in', challenge: 'abc', payload: null, userId: null, sessionId: null, createdAt: now(), expiresAt: now() + 60_000 });
    const results = await Promise.all(Array.from({ length: 12 }, () => consumeAuthChallenge(db(), 'chl_parallel', 'passkey_sign_in', now())));
    expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    expect(results.find((r) => r !== undefined)).toMatchObject({ id: 'chl_parallel', challenge: 'abc' });
  });

  it('refuses an expired challenge, another purpose, and another session', async () => {
    await insertAuthChallenge(db(), { id: 'chl_old', purpose: 'passkey_sign_in', challenge: 'x', payload: null, userId: null, sessionId: null, createdAt: now() - 10, expiresAt: now() - 1 });
    expect(await consumeAuthChallenge(db(), 'chl_old', 'passkey_sign_in', now())).toBeUndefined();
    // The maintenance loop's sweep drops it; live ones stay.
    expect(await server().container.services.passkeys.sweepChallenges()).toBe(1);
    expect(await db().selectFrom('auth_challenges').select('id').where('id', '=', 'chl_old').execute()).toEqual([]);
    await insertAuthChallenge(db(), { id: 'chl_reg', purpose: 'passkey_registration', challenge: 'y', payload: { a: 'b' }, userId: 'usr_1', sessionId: 'uss_1', createdAt: now(), expiresAt: now() + 60_000 });
    expect(await consumeAuthChallenge(db(), 'chl_reg', 'sso', now())).toBeUndefined();
    expect(await consumeAuthChallenge(db(), 'chl_reg', 'passkey_registration', now(), 'uss_2')).toBeUndefined();
    expect(await consumeAuthChallenge(db(), 'chl_reg', 'passkey_registration', now(), 'uss_1')).toMatchObject({ payload: { a: 'b' }, userId: 'usr_1' });
  });
});

