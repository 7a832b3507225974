import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';

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

export async function listEventsForSubject(db: Kysely<Database>, workspaceId: string, subjectId: string): Promise<EventRow[]> {
  const rows = await db
    .selectFrom('events')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('subject_id', '=', subjectId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id, type: r.type, subjectId: r.subject_id, payload: r.payload, createdAt: toMillis(r.created_at) }));
}
