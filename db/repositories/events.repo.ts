import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

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
  await db
    .insertInto('events')
    .values({ id: row.id, workspace_id: row.workspaceId, type: row.type, subject_id: row.subjectId, payload: row.payload, created_at: row.createdAt })
    .execute();
}
