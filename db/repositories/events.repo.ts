import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { compiledOnce } from './compiled-once.js';

export interface EventRow {
  id: string;
  workspaceId: string;
  type: string;
  subjectId: string;
  payload: string;
  createdAt: number;
}

/** Appends to the outbox; called inside the transaction of the state change the event reports. */
export async function insertEvent(db: Kysely<Database>, row: EventRow): Promise<void> {
  await appendRow(db, [row.id, row.workspaceId, row.type, row.subjectId, row.payload, row.createdAt]);
}

const appendRow = compiledOnce((db) => db.insertInto('events').values({ id: '', workspace_id: '', type: '', subject_id: '', payload: '', created_at: 0 }));
