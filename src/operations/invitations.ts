// Invitation operations and email events (@turnkey/http 6.6.0 createInvitations,
// deleteInvitation, listEmailEvents; swagger v1CreateInvitationsIntent → createInvitationsResult,
// v1DeleteInvitationIntent → deleteInvitationResult, v1ListEmailEventsRequest):
// create_invitations, delete_invitation, list_email_events. Accepting an invitation is not a
// stamped operation (the invitee has no credential yet): src/http/invitations.ts.
//
// Policy resource and action: INVITATION / CREATE and INVITATION / DELETE, the reference's
// documented mapping (docs/reference/policies.md "Keywords"; test/vectors/activity-resources.json).
// create_invitations runs 'pure': the emails go out with no lock held (src/domain/identity/invitations.ts).
import { createInvitations, deleteInvitation, type InvitationParams } from '../domain/identity/invitations.js';
import { listEmailEvents, type ListEmailEventsParams } from '../domain/identity/email-events.js';
import { defineActivity, defineQuery } from './define.js';

export const createInvitationsOp = defineActivity<{ invitations: InvitationParams[] }, { invitationIds: string[] }>({
  path: 'create_invitations',
  type: 'ACTIVITY_TYPE_CREATE_INVITATIONS',
  result: 'createInvitationsResult',
  policy: { resource: 'INVITATION', action: 'CREATE' },
  execution: 'pure',
  execute: (ctx, p) => createInvitations(ctx, p),
});

export const deleteInvitationOp = defineActivity<{ invitationId: string }, { invitationId: string }>({
  path: 'delete_invitation',
  type: 'ACTIVITY_TYPE_DELETE_INVITATION',
  result: 'deleteInvitationResult',
  policy: { resource: 'INVITATION', action: 'DELETE' },
  execute: (ctx, p) => deleteInvitation(ctx, p.invitationId),
});

export const listEmailEventsOp = defineQuery<ListEmailEventsParams & { organizationId: string }, unknown>({
  path: 'list_email_events',
  request: 'v1ListEmailEventsRequest',
  execute: (ctx, b) => listEmailEvents(ctx, b),
});
