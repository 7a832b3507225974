import type { Kysely } from 'kysely';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  type WebAuthnCredential,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { consumeAuthChallenge, deleteExpiredAuthChallenges, insertAuthChallenge } from '../../../db/repositories/auth-challenges.repo.js';
import { listMembershipsOfUser } from '../../../db/repositories/memberships.repo.js';
import { deletePasskey, findPasskeyByCredentialId, insertPasskey, listPasskeysOfUser, recordPasskeyUse, renamePasskey } from '../../../db/repositories/passkeys.repo.js';
import { findUser } from '../../../db/repositories/users.repo.js';
import type { Database } from '../../../db/schema.js';
import { recordAudit } from '../audit/record.js';
import type { Clock } from '../clock.js';
import { ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import type { Origin, Principal } from '../principal.js';
import { roleOf } from '../api-keys/api-keys.service.js';
import type { SessionsService } from '../sessions/sessions.service.js';
import { authenticationResponse, passkeyName, registrationResponse } from './passkeys.schema.js';

/** A ceremony's challenge lives this long: the browser's prompt, a person's touch, and some slack. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60_000;

/** A signed-in person, the only kind of principal that owns passkeys. */
export type PersonPrincipal = Extract<Principal, { kind: 'user' }>;

/** A passkey as its owner sees it in their list. */
export interface PasskeyView {
  id: string;
  name: string;
  transports: string[];
  createdAt: number;
  lastUsedAt: number | null;
}

/** Why a passkey sign-in was refused; the page says the same thing for each (nothing to learn about accounts). */
export type PasskeySignInRefusal = 'expired' | 'malformed' | 'unknown_passkey' | 'not_verified';

export type PasskeysService = ReturnType<typeof createPasskeysService>;

/**
 * Passkeys (WebAuthn with discoverable credentials and user verification required). The relying party is the
 * service's own host: RP ID the hostname of BASE_URL, expected origin its origin (browsers refuse WebAuthn on an
 * IP address, hence `localhost` for local use). Each ceremony's challenge is stored server-side and consumed by its
 * second request, so an answer can be used once only.
 */
export function createPasskeysService(deps: { db: Kysely<Database>; clock: Clock; sessions: SessionsService; baseUrl: string; rpName: string }) {
  const { db, clock } = deps;
  const base = new URL(deps.baseUrl);
  const rpID = base.hostname;
  const expectedOrigin = base.origin;

  async function newChallenge(purpose: 'passkey_registration' | 'passkey_sign_in', challenge: string, owner: { userId: string; sessionId: string } | null): Promise<string> {
    const now = clock.now();
    const id = newId('chl_', 24);
    await insertAuthChallenge(db, {
      id,
      purpose,
      challenge,
      payload: null,
      userId: owner?.userId ?? null,
      sessionId: owner?.sessionId ?? null,
      createdAt: now,
      expiresAt: now + PASSKEY_CHALLENGE_TTL_MS,
    });
    return id;
  }

  const invalid = (field: string, message: string) => new ServiceError('validation_failed', `${field} ${message}`, { fields: [{ path: field, message }] });

  return {
    rpID,

    /** Drops abandoned ceremonies' challenges (passkeys and single sign-on), run by the maintenance loop. */
    sweepChallenges: (): Promise<number> => deleteExpiredAuthChallenges(db, clock.now()),

    /** A person's passkeys, oldest first. */
    async list(userId: string): Promise<PasskeyView[]> {
      return (await listPasskeysOfUser(db, userId)).map((p) => ({ id: p.id, name: p.name, transports: p.transports, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt }));
    },

    /**
     * Starts adding a passkey for the signed-in person: the options for `navigator.credentials.create` and the id of
     * the challenge, which only this session can finish. Their existing passkeys are excluded, so an authenticator
     * holding one already says so instead of making a second.
     */
    async registrationOptions(principal: PersonPrincipal): Promise<{ challengeId: string; options: PublicKeyCredentialCreationOptionsJSON }> {
      const user = await findUser(db, principal.userId);
      if (!user) throw new ServiceError('not_found', 'Your account no longer exists.');
      const existing = await listPasskeysOfUser(db, user.id);
      const options = await generateRegistrationOptions({
        rpName: deps.rpName,
        rpID,
        userName: user.email,
        userDisplayName: user.name ?? user.email,
        userID: isoBase64URL.toBuffer(isoBase64URL.fromUTF8String(user.id)),
        attestationType: 'none',
        excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
        authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
        timeout: PASSKEY_CHALLENGE_TTL_MS,
      });
      const challengeId = await newChallenge('passkey_registration', options.challenge, { userId: user.id, sessionId: principal.sessionId });
      return { challengeId, options };
    },

    /**
     * Finishes adding a passkey: consumes the session's challenge, verifies the authenticator's answer (origin, RP
     * ID, user verification), stores the public key and records `auth.passkey_added`.
     * @throws ServiceError `validation_failed` naming `credential` (expired, replayed or unverifiable answer) or
     * `name`.
     */
    async register(principal: PersonPrincipal, input: { challengeId: string; credential: unknown; name: unknown }): Promise<PasskeyView> {
      const name = passkeyName.safeParse(input.name);
      if (!name.success) throw invalid('name', name.error.issues[0]?.message ?? 'is invalid');
      const parsed = registrationResponse.safeParse(input.credential);
      if (!parsed.success) throw invalid('credential', 'is not an answer from a passkey: try adding it again');
      const now = clock.now();
      const challenge = await consumeAuthChallenge(db, input.challengeId, 'passkey_registration', now, principal.sessionId);
      if (!challenge || challenge.userId !== principal.userId) throw invalid('credential', 'came too late or was already used: try adding the passkey again');
      let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
      try {
        verified = await verifyRegistrationResponse({
          response: parsed.data as RegistrationResponseJSON,
          expectedChallenge: challenge.challenge,
          expectedOrigin,
          expectedRPID: rpID,
          requireUserVerification: true,
        });
      } catch {
        verified = { verified: false };
      }
      if (!verified.verified) throw invalid('credential', 'could not be verified: try adding the passkey again');
      const credential = verified.registrationInfo.credential;
      const row = {
        id: newId('pk_'),
        credentialId: credential.id,
        userId: principal.userId,
        publicKey: isoBase64URL.fromBuffer(credential.publicKey),
        counter: credential.counter,
        transports: credential.transports ?? [],
        name: name.data,
        createdAt: now,
        lastUsedAt: null,
      };
      try {
        await db.transaction().execute(async (tx) => {
          await insertPasskey(tx, row);
          await recordAudit(tx, principal, 'auth.passkey_added', { type: 'passkey', id: row.id, label: row.name }, now);
        });
      } catch (err) {
        // The credential id's unique index: this authenticator's passkey is registered already.
        if (await findPasskeyByCredentialId(db, credential.id)) throw invalid('credential', 'is a passkey registered already');
        throw err;
      }
      return { id: row.id, name: row.name, transports: row.transports, createdAt: row.createdAt, lastUsedAt: null };
    },

    /**
     * Renames one of the person's passkeys.
     * @throws ServiceError `validation_failed` naming `name`; `not_found` when it is not theirs.
     */
    async rename(principal: PersonPrincipal, id: string, rawName: unknown): Promise<void> {
      const name = passkeyName.safeParse(rawName);
      if (!name.success) throw invalid('name', name.error.issues[0]?.message ?? 'is invalid');
      if (!(await renamePasskey(db, principal.userId, id, name.data))) throw new ServiceError('not_found', 'No such passkey.');
    },

    /**
     * Removes one of the person's passkeys and records `auth.passkey_removed` in the same transaction.
     * @throws ServiceError `not_found` when it is not theirs or already removed.
     */
    async remove(principal: PersonPrincipal, id: string): Promise<void> {
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        const removed = await deletePasskey(tx, principal.userId, id);
        if (!removed) throw new ServiceError('not_found', 'No such passkey.');
        await recordAudit(tx, principal, 'auth.passkey_removed', { type: 'passkey', id: removed.id, label: removed.name }, now);
      });
    },

    /**
     * Starts a passkey sign-in: options for `navigator.credentials.get` with no credential listed (discoverable
     * credentials: the authenticator offers the accounts it holds for this site) and the challenge's id, which
     * the browser keeps in a cookie until the answer comes back.
     */
    async signInOptions(): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
      const options = await generateAuthenticationOptions({ rpID, userVerification: 'required', timeout: PASSKEY_CHALLENGE_TTL_MS });
      return { challengeId: await newChallenge('passkey_sign_in', options.challenge, null), options };
    },

    /**
     * Finishes a passkey sign-in: consumes the challenge, verifies the assertion against the stored public key
     * (user verification required), records the use, opens a session and records `auth.signed_in` (method
     * passkey). Refusals are values: the page says the same for each.
     */
    async signIn(challengeId: string, assertion: unknown, origin: Omit<Origin, 'via'>): Promise<{ ok: true; token: string; userId: string } | { ok: false; reason: PasskeySignInRefusal }> {
      const now = clock.now();
      // The challenge goes first, whatever follows: an answer is tried once.
      const challenge = await consumeAuthChallenge(db, challengeId, 'passkey_sign_in', now);
      if (!challenge) return { ok: false, reason: 'expired' };
      const parsed = authenticationResponse.safeParse(assertion);
      if (!parsed.success) return { ok: false, reason: 'malformed' };
      const passkey = await findPasskeyByCredentialId(db, parsed.data.id);
      if (!passkey) return { ok: false, reason: 'unknown_passkey' };
      let result: Awaited<ReturnType<typeof verifyAuthenticationResponse>> | undefined;
      try {
        result = await verifyAuthenticationResponse({
          response: parsed.data as AuthenticationResponseJSON,
          expectedChallenge: challenge.challenge,
          expectedOrigin,
          expectedRPID: rpID,
          credential: { id: passkey.credentialId, publicKey: isoBase64URL.toBuffer(passkey.publicKey), counter: passkey.counter, transports: passkey.transports as WebAuthnCredential['transports'] },
          requireUserVerification: true,
        });
      } catch {
        result = undefined;
      }
      if (!result?.verified) return { ok: false, reason: 'not_verified' };
      if (!(await recordPasskeyUse(db, passkey.id, passkey.counter, result.authenticationInfo.newCounter, now))) return { ok: false, reason: 'not_verified' };
      const [membership] = await listMembershipsOfUser(db, passkey.userId);
      const session = await deps.sessions.openForUser(passkey.userId, 'passkey', origin, membership?.workspaceId);
      if (membership) {
        const actor: Principal = {
          kind: 'user',
          workspaceId: membership.workspaceId,
          userId: passkey.userId,
          sessionId: session.sessionId,
          keyId: null,
          role: roleOf(membership.role),
          brandIds: membership.brandIds,
          origin: { ...origin, via: 'dashboard' },
        };
        await recordAudit(db, actor, 'auth.signed_in', { type: 'user', id: passkey.userId }, now, { method: 'passkey', passkey_id: passkey.id });
      }
      return { ok: true, token: session.token, userId: passkey.userId };
    },
  };
}
