// Invitations (swagger v1CreateInvitationsIntent, v1InvitationParams,
// v1DeleteInvitationIntent, v1InvitationStatus; v1AcceptInvitationIntentV2 for what accepting
// takes): a team member is onboarded by email, without anyone handing out an API key.
//
// create_invitations records each invitation and emails its receiver a link to the dashboard's
// accept page carrying a random single-use token (32 bytes, base64url). Only the token's SHA-256 is
// stored; the token is in no log, activity or response. Accepting (the invitee has no credential
// yet, so this is not a stamped activity: src/http/invitations.ts) presents the token with a
// passkey's registration; the user is created with that passkey, the invited name, email and tags,
// and the invitation becomes ACCEPTED in the same transaction. delete_invitation revokes a pending
// invitation (REVOKED), after which its token is refused with that reason. An invitation expires
// SIGIL_INVITATION_TTL_SECONDS (default INVITATION_TTL_MS, 72 hours) after it was made (docs/sessions-and-logins.md "Invitations").
import { createHash, randomBytes } from 'node:crypto';
import { canonicalCredentialId } from '../../crypto/webauthn.js';
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import type { InvitationRow, Repositories } from '../../store/index.js';
import type { AuthenticatorParams } from './authenticators.js';
import { checkEmail, checkName } from './contacts.js';
import { minutesText } from './email-auth.js';
import type { ActivityContext, Services } from '../context.js';
import { newId } from '../ids.js';
import { requireOrganization } from '../governance/organizations.js';
import { reserve } from '../governance/quotas.js';
import { timestamp } from '../records.js';
import { insertUserWithCredentials, requireTags } from './users.js';
import { requireUser } from '../lookup.js';

export const INVITATION_TTL_MS = 72 * 3600 * 1000;
/** Pending invitations an organization may hold (docs/reference/api.md "Limits": "Invitations 100 / 100"). */
export const MAX_PENDING_INVITATIONS = 100;

const PENDING = 'INVITATION_STATUS_CREATED';
const ACCEPTED = 'INVITATION_STATUS_ACCEPTED';
const REVOKED = 'INVITATION_STATUS_REVOKED';

export interface InvitationParams {
  receiverUserName: string;
  receiverUserEmail: string;
  receiverUserTags: string[];
  accessType: string;
  senderUserId: string;
}

/** The hex SHA-256 an accept token is stored and looked up as. */
export function invitationTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The dashboard link an invitation email carries; the token travels in the fragment, which browsers never send to a server. */
function acceptLink(services: Services, token: string): string {
  return `${services.settings.dashboardUrl ?? 'http://localhost:8080'}/#/accept-invitation?token=${token}`;
}

function invitationMessage(organizationName: string, receiverName: string, link: string, ttlMs: number) {
  return {
    subject: `You are invited to ${organizationName}`,
    text:
      `Hello ${receiverName},\n\n` +
      `You are invited to join ${organizationName}. Open this link to accept and register a passkey:\n\n${link}\n\n` +
      `The link works once and expires in ${minutesText(Math.round(ttlMs / 1000))}.\n` +
      `If you did not expect this, you can ignore this message.\n`,
  };
}

/**
 * Records the invitations and emails each receiver. Checked before anything is written: names,
 * email addresses (one invitation per address: no user of the organization and no pending
 * invitation may have it already), tags and sender are the organization's. Runs as a 'pure'
 * activity so no lock is held while mail is sent: the rows are written first, and when an email
 * cannot be delivered they are withdrawn again and the activity fails (a link already sent for
 * another receiver of the same activity then answers that the invitation does not exist).
 */
export async function createInvitations(ctx: ActivityContext, p: { invitations: InvitationParams[] }): Promise<{ invitationIds: string[] }> {
  const orgId = ctx.organization.id;
  if (p.invitations.length === 0) throw invalid('invitations must list at least one invitation');
  if (!ctx.services.delivery) throw new SigilError('INTERNAL', 'this process cannot send email');
  const ttl = ctx.services.settings.invitationTtlMs ?? INVITATION_TTL_MS;
  const seen = new Set<string>();
  const rows: (InvitationRow & { token: string })[] = [];
  for (const [i, inv] of p.invitations.entries()) {
    const field = `invitations[${i}]`;
    checkName(inv.receiverUserName, `${field}.receiverUserName`);
    checkEmail(inv.receiverUserEmail, `${field}.receiverUserEmail`);
    const email = inv.receiverUserEmail.toLowerCase();
    if (seen.has(email)) throw invalid(`${field}.receiverUserEmail: ${inv.receiverUserEmail} is invited twice in this request`);
    seen.add(email);
    if (await ctx.repos.users.hasEmailIgnoringCase(orgId, email)) {
      throw new SigilError('CONFLICT', `${field}.receiverUserEmail: a user of this organization already has the email address ${inv.receiverUserEmail}`);
    }
    if ((await ctx.repos.invitations.countPending(orgId, ctx.now, email)) > 0) {
      throw new SigilError('CONFLICT', `${field}.receiverUserEmail: ${inv.receiverUserEmail} already has a pending invitation: delete it first to invite again`);
    }
    const tags = await requireTags(ctx.repos, orgId, inv.receiverUserTags, `${field}.receiverUserTags`);
    await requireUser(ctx.repos, orgId, inv.senderUserId);
    const token = randomBytes(32).toString('base64url');
    rows.push({
      id: ctx.newId(),
      organization_id: orgId,
      receiver_user_name: inv.receiverUserName,
      receiver_email: inv.receiverUserEmail,
      receiver_user_tags: JSON.stringify(tags),
      access_type: inv.accessType,
      sender_user_id: inv.senderUserId,
      status: PENDING,
      token_hash: invitationTokenHash(token),
      expires_at: ctx.now + ttl,
      accepted_user_id: null,
      created_at: ctx.now,
      updated_at: ctx.now,
      token,
    });
  }
  const pending = await ctx.repos.invitations.countPending(orgId, ctx.now);
  if (pending + rows.length > MAX_PENDING_INVITATIONS) {
    throw new SigilError(
      'RATE_LIMIT_EXCEEDED',
      `organization has exceeded maximum invitations: an organization holds at most ${MAX_PENDING_INVITATIONS} pending invitations (has ${pending}, adding ${rows.length})`,
    );
  }
  await ctx.repos.invitations.insert(rows.map(({ token: _token, ...row }) => row));
  for (const row of rows) {
    try {
      await ctx.services.delivery.send({
        channel: 'email',
        to: row.receiver_email,
        ...invitationMessage(ctx.organization.name, row.receiver_user_name, acceptLink(ctx.services, row.token), ttl),
        organizationId: orgId,
        kind: 'INVITATION',
      });
    } catch {
      await ctx.repos.invitations.delete(rows.map((r) => r.id));
      throw new SigilError('INTERNAL', `the invitation could not be delivered to ${row.receiver_email}: no invitation was created; try again later`, { http: 502, grpc: 14 });
    }
  }
  return { invitationIds: rows.map((r) => r.id) };
}

/** Revokes a pending invitation: its link stops working. Accepted and revoked ones stay as they are. */
export async function deleteInvitation(ctx: ActivityContext, invitationId: string): Promise<{ invitationId: string }> {
  const row = await ctx.repos.invitations.get(ctx.organization.id, invitationId);
  if (!row) throw notFound(`invitation not found: ${invitationId} is not an invitation of organization ${ctx.organization.id}`);
  if (row.status === ACCEPTED) throw invalid(`invitation ${invitationId} was already accepted (user ${row.accepted_user_id}): delete the user instead`);
  if (row.status === REVOKED || !(await ctx.repos.invitations.settle(row.id, REVOKED, ctx.now))) {
    throw invalid(`invitation ${invitationId} was already revoked`);
  }
  return { invitationId };
}

/** v1Invitation. */
export function invitationRecord(row: InvitationRow) {
  return {
    invitationId: row.id,
    receiverUserName: row.receiver_user_name,
    receiverEmail: row.receiver_email,
    receiverUserTags: JSON.parse(row.receiver_user_tags) as string[],
    accessType: row.access_type,
    status: row.status,
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
    senderUserId: row.sender_user_id,
  };
}

/** The invitation a token opens, while it can still be accepted; otherwise an error saying why not. */
async function openInvitation(repos: Repositories, token: unknown, now: number): Promise<InvitationRow> {
  if (typeof token !== 'string' || !/^[A-Za-z0-9_-]{20,100}$/.test(token)) throw invalid('token: the invitation token is missing or malformed');
  const row = await repos.invitations.byTokenHash(invitationTokenHash(token));
  if (!row) throw notFound('invitation not found: the link is not (or no longer) an invitation');
  if (row.status === ACCEPTED) throw new SigilError('CONFLICT', 'invitation already accepted: each invitation link works once');
  if (row.status === REVOKED) throw new SigilError('CONFLICT', 'invitation revoked: ask the organization for a new invitation');
  if (row.expires_at <= now) throw invalid('invitation expired: ask the organization for a new invitation');
  return row;
}

/** What the accept page shows before the passkey is made: who is invited to which organization. */
export async function describeInvitation(repos: Repositories, token: unknown, now: number) {
  const row = await openInvitation(repos, token, now);
  const org = await requireOrganization(repos, row.organization_id);
  return { organizationId: org.id, organizationName: org.name, invitation: invitationRecord(row), expiresAt: String(row.expires_at) };
}

export interface AcceptedInvitation {
  organizationId: string;
  invitationId: string;
  userId: string;
  /** The new passkey's public key (compressed hex), as the API shows it. */
  authenticatorPublicKey: string;
}

/**
 * Accepts an invitation with a passkey (v1AuthenticatorParamsV2): in one transaction the user is
 * created with the invited name, email (verified) and tags and that passkey (the registration checked like
 * create_authenticators'), counted against the organization's users, and the invitation moves to
 * ACCEPTED by compare-and-set, so of two racing accepts (or an accept and a revoke) one wins.
 */
export async function acceptInvitation(
  deps: {
    transaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T>;
    services: Services;
    now: number;
    /** Records the acceptance in the same transaction (the audit log, src/http/invitations.ts). */
    record?: (repos: Repositories, accepted: AcceptedInvitation) => void;
  },
  token: unknown,
  authenticator: AuthenticatorParams,
): Promise<{ organizationId: string; invitationId: string; userId: string }> {
  return deps.transaction(async (repos) => {
    const row = await openInvitation(repos, token, deps.now);
    const org = await requireOrganization(repos, row.organization_id);
    await reserve(repos, org, 'users', 1);
    const ctx = { repos, now: deps.now, newId, services: deps.services };
    const userId = await insertUserWithCredentials(
      ctx,
      org.id,
      { userName: row.receiver_user_name, userEmail: row.receiver_email, apiKeys: [], authenticators: [authenticator] },
      'authenticator',
      'a user',
    );
    await repos.users.setTags(org.id, userId, JSON.parse(row.receiver_user_tags) as string[]);
    // The link was only ever sent to this address: using it proves the invitee reads that mailbox.
    await repos.users.markContactVerified(org.id, userId, 'email', deps.now);
    if (!(await repos.invitations.settle(row.id, ACCEPTED, deps.now, userId))) {
      throw new SigilError('CONFLICT', 'invitation no longer pending: it was accepted or revoked meanwhile');
    }
    const [passkey] = await repos.authenticators.findByCredentialId([org.id], canonicalCredentialId(authenticator.attestation.credentialId) ?? '');
    deps.record?.(repos, { organizationId: org.id, invitationId: row.id, userId, authenticatorPublicKey: passkey?.credential_public_key ?? '' });
    return { organizationId: org.id, invitationId: row.id, userId };
  });
}
