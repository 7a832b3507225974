import { sql } from 'kysely';
import type { FrozenMigration } from './types.js';

const COLUMNS = [
  'id',
  'workspace_id',
  'webhook_id',
  'event_id',
  'event_type',
  'body',
  'status',
  'attempt_count',
  'manual',
  'next_attempt_at',
  'locked_by',
  'locked_until',
  'created_at',
  'updated_at',
  'delivered_at',
  'redeliver_requested',
].map((c) => `"${c}"`);

/**
 * SQLite stores deliveries clustered by endpoint (issue 19, bench row (d)): a table without rowid whose primary key
 * is (webhook_id, id), the id kept unique by an index of its own. An event fans out to every endpoint at once, so
 * in insertion order each endpoint's deliveries sit between the others'; a claim or a record of one endpoint's
 * batch then dirtied about twice as many pages beside a receiver with a backlog, and a silent receiver cost the
 * others a fifth of their rate. PostgreSQL keeps its heap as it is: it does not keep a table in key order.
 *
 * A table is rebuilt in SQLite by copying it, with foreign keys off (dropping the old table would otherwise cascade
 * to the attempts), inside one transaction, so a crash leaves either the old table or the new one. The check for
 * the new one is inside that transaction, so a second process migrating at the same moment finds it done.
 */
export const deliveriesByEndpoint: FrozenMigration = {
  name: '0016_deliveries_by_endpoint',
  async up(db, dialect) {
    if (dialect !== 'sqlite') return;
    await sql`pragma foreign_keys = off`.execute(db);
    try {
      await sql`begin immediate`.execute(db);
      try {
        const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'deliveries'`.execute(db);
        if (!/without rowid/i.test(rows[0]?.sql ?? '')) {
          const columns = sql.raw(COLUMNS.join(', '));
          await sql`
            create table deliveries_by_endpoint (
              "id" text not null,
              "workspace_id" text not null references "workspaces" ("id") on delete cascade,
              "webhook_id" text not null references "webhooks" ("id") on delete cascade,
              "event_id" text not null,
              "event_type" text not null,
              "body" text not null,
              "status" text not null,
              "attempt_count" integer default 0 not null,
              "manual" integer default 0 not null,
              "next_attempt_at" bigint,
              "locked_by" text,
              "locked_until" bigint,
              "created_at" bigint not null,
              "updated_at" bigint not null,
              "delivered_at" bigint,
              "redeliver_requested" integer default 0 not null,
              primary key ("webhook_id", "id")
            ) without rowid`.execute(db);
          await sql`insert into deliveries_by_endpoint (${columns}) select ${columns} from deliveries`.execute(db);
          await sql`drop table deliveries`.execute(db);
          await sql`alter table deliveries_by_endpoint rename to deliveries`.execute(db);
          // The attempts' foreign key and every lookup by id need the id unique on its own.
          await sql`create unique index "deliveries_id_idx" on "deliveries" ("id")`.execute(db);
          await sql`create index "deliveries_due_idx" on "deliveries" ("status", "next_attempt_at")`.execute(db);
          await sql`create index "deliveries_webhook_idx" on "deliveries" ("webhook_id", "created_at", "id")`.execute(db);
          await sql`create index "deliveries_endpoint_due_idx" on "deliveries" ("webhook_id", "next_attempt_at") where "status" = 'pending'`.execute(db);
          const broken = await sql`pragma foreign_key_check`.execute(db);
          if (broken.rows.length > 0) throw new Error(`rebuilding deliveries would break ${broken.rows.length} foreign keys`);
        }
        await sql`commit`.execute(db);
      } catch (err) {
        await sql`rollback`.execute(db);
        throw err;
      }
    } finally {
      await sql`pragma foreign_keys = on`.execute(db);
    }
  },
};
