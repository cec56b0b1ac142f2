// Email events (swagger v1EmailEvent, v1ListEmailEventsRequest): the
// delivery layer reports each step of an email (src/delivery/delivery.ts); here a step becomes a row
// and a row the API's record. Rows are written on their own, outside any activity's transaction, so
// the Bounce of an email whose activity then failed is still there to be listed. Neither the row nor
// the record holds the subject, the text, a code or a link.
import { invalid } from '../../errors/errors.js';
import type { EmailEventRow, Repositories } from '../../store/index.js';
import type { EmailEvent } from '../../delivery/delivery.js';
import type { OperationContext } from '../context.js';
import { newId } from '../ids.js';
import { pageLimit, requireCursors } from '../records.js';

/** The callback src/delivery reports to: one row per event. */
export function emailEventRecorder(repos: Repositories): (event: EmailEvent) => Promise<void> {
  return (e) =>
    repos.emailEvents.insert({
      id: newId(),
      organization_id: e.organizationId,
      message_id: e.messageId,
      event_type: e.eventType,
      message_kind: e.kind,
      from_address: e.from,
      to_address: e.to,
      recipient: e.to.toLowerCase(),
      details: JSON.stringify(e.details),
      timestamp: e.at,
      created_at: Date.now(),
    });
}

/**
 * v1EmailEvent, with `messageKind` (a Sigil addition, docs/sessions-and-logins.md "Email events"): what the message was
 * for, so an operator tells an OTP from an invitation without its text.
 */
export function emailEventRecord(row: EmailEventRow) {
  return {
    id: row.id,
    organizationId: row.organization_id,
    messageId: row.message_id,
    eventType: row.event_type,
    fromAddress: row.from_address,
    toAddress: row.to_address,
    timestamp: String(row.timestamp),
    createdAt: String(row.created_at),
    details: JSON.parse(row.details) as Record<string, string>,
    messageKind: row.message_kind,
  };
}

export interface ListEmailEventsParams {
  email: string;
  eventType?: string;
  paginationOptions?: { limit?: string; before?: string; after?: string };
}

/** One page of the events of one recipient, newest first (the swagger's order); cursors are event ids. */
export async function listEmailEvents(ctx: OperationContext, p: ListEmailEventsParams) {
  const orgId = ctx.organization.id;
  const email = p.email.trim();
  if (email === '') throw invalid('email must name the recipient whose email events to list');
  const page = p.paginationOptions ?? {};
  await requireCursors(page, (id) => ctx.repos.emailEvents.get(orgId, id), 'an email event');
  const rows = await ctx.repos.emailEvents.page(orgId, email.toLowerCase(), p.eventType || undefined, {
    limit: pageLimit(page.limit),
    before: page.before || undefined,
    after: page.after || undefined,
    order: 'desc',
  });
  return { emailEvents: rows.map(emailEventRecord) };
}
