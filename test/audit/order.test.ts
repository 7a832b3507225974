import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../db/schema.js';
import { recordAudit } from '../../src/core/audit/record.js';
import { followingTimeOrderedId, newTimeOrderedId } from '../../src/core/ids.js';

/** Stands in for a transaction: keeps the ids of the entries written, in the order they were written. */
function capturingTx(ids: string[]): Kysely<Database> {
  const tx = { insertInto: () => ({ values: (row: { id: string }) => ({ execute: async () => void ids.push(row.id) }) }) };
  return tx as unknown as Kysely<Database>;
}

describe('audit entries written in one millisecond', () => {
  it('read back in the order they were written, and before the next millisecond', async () => {
    const ids: string[] = [];
    const tx = capturingTx(ids);
    const actor = { kind: 'system', workspaceId: 'ws_test', label: 'test' } as const;
    const at = Date.UTC(2026, 10, 24, 9);
    for (let i = 0; i < 200; i++) await recordAudit(tx, actor, 'content.updated', null, at);
    await recordAudit(tx, actor, 'content.updated', null, at + 1);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('the following id carries through the random part and never into the time', () => {
    const id = newTimeOrderedId('aud_', 0);
    const base = id.slice(0, 14);
    expect(followingTimeOrderedId(`${base}000000000z`, 'aud_')).toBe(`${base}0000000010`);
    expect(followingTimeOrderedId(`${base}00000000zz`, 'aud_')).toBe(`${base}0000000100`);
    expect(followingTimeOrderedId(`${base}zzzzzzzzzz`, 'aud_')).toBeNull();
    const next = followingTimeOrderedId(id, 'aud_')!;
    expect(next > id).toBe(true);
    expect(next.slice(0, 14)).toBe(base);
  });
});
