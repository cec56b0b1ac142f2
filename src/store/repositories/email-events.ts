// Email events (migration 022): SQL for the `email_events` table,
// written once per step of a message by the delivery layer and read newest first by recipient.
import type { Kysely, Selectable } from 'kysely';
import type { Database, EmailEventTable } from '../schema.js';
import { applyPage, type Page } from './pagination.js';

export type EmailEventRow = Selectable<EmailEventTable>;

export class EmailEventsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: EmailEventRow): Promise<void> {
    await this.db.insertInto('email_events').values(row).execute();
  }

  async get(organizationId: string, id: string): Promise<EmailEventRow | undefined> {
    return this.db.selectFrom('email_events').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** One page of the events of `recipient` (lower-cased) in list order; cursors are event ids. */
  async page(organizationId: string, recipient: string, eventType: string | undefined, page: Page): Promise<EmailEventRow[]> {
    const position = async (id: string) =>
      this.db.selectFrom('email_events').select(['created_at', 'id']).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    const cursor = { after: page.after ? await position(page.after) : undefined, before: page.before ? await position(page.before) : undefined };
    let q = this.db.selectFrom('email_events').selectAll().where('organization_id', '=', organizationId).where('recipient', '=', recipient);
    if (eventType !== undefined) q = q.where('event_type', '=', eventType);
    const { query, reversed } = applyPage(q, 'email_events', page, cursor);
    const rows = await query.execute();
    return reversed ? rows.reverse() : rows;
  }
}
