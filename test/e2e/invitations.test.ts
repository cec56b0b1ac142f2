// Invitations and email events (docs/sessions-and-logins.md "Invitations", "Email events") through
// @turnkey/http's TurnkeyClient against a real `sigil serve` and a real SMTP server on loopback
// (test/helpers/mail.ts), one of whose mailboxes refuses mail with a permanent 550:
//  - create_invitations mails each receiver a link whose token is stored nowhere in plaintext (not
//    in any table, nor in the activity); accepting it with a passkey registration (a software
//    WebAuthn authenticator) creates the user with the invited name, email, tags and passkey, who
//    then stamps whoami with that passkey; the acceptance is an audit log entry and the log verifies;
//    the link works once;
//  - delete_invitation revokes a pending invitation: its link is then refused and changes nothing;
//  - bad input (a malformed email, an unknown tag or sender, an address already a user's or already
//    invited, a missing field) is refused with a clear error and changes nothing; a user without a
//    policy is denied, and a policy on INVITATION / CREATE lets them invite but not revoke;
//  - an invitation past its lifetime (SIGIL_INVITATION_TTL_SECONDS, 1 s in a second deployment) is
//    refused as expired;
//  - list_email_events shows Send and Delivery (with the server's 250 answer) of an OTP email and the
//    Send and Bounce (550) of an invitation to the refusing mailbox, whose activity failed and left no
//    invitation; newest first, filtered by type, paginated; never the OTP code or the link.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TurnkeyClient } from '@turnkey/http';
import { WebauthnStamper } from '@turnkey/webauthn-stamper';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, httpClient, newKey, rawPost, sdkServerClient } from '../helpers/clients.js';
import { dbSnapshot, expectRefusedUnchanged } from '../helpers/db-snapshot.js';
import { codeIn, parse, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';
import { SoftwareAuthenticator, installNavigator } from '../helpers/software-authenticator.js';

let mail: Inbox;
let sigil: SigilInstance;
let client: TurnkeyClient;
const device: SoftwareAuthenticator[] = [];

beforeAll(async () => {
  mail = await startInbox({ rejectRecipients: /^nobody@/ });
  sigil = await startSigil(smtpEnv(mail));
  client = httpClient(sigil);
  installNavigator(() => device);
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await mail?.close();
});

const org = () => sigil.root.organizationId;
const ts = () => String(Date.now());

function invitation(email: string, extra: Record<string, unknown> = {}) {
  return { receiverUserName: email.split('@')[0], receiverUserEmail: email, receiverUserTags: [] as string[], accessType: 'ACCESS_TYPE_WEB' as const, senderUserId: sigil.root.userId, ...extra };
}

async function invite(...invitations: ReturnType<typeof invitation>[]) {
  const before = new Map(invitations.map((i) => [i.receiverUserEmail, mail.count(i.receiverUserEmail)]));
  const res = await client.createInvitations({ type: 'ACTIVITY_TYPE_CREATE_INVITATIONS', timestampMs: ts(), organizationId: org(), parameters: { invitations } });
  expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  const ids = res.activity.result.createInvitationsResult!.invitationIds;
  const tokens: string[] = [];
  for (const i of invitations) {
    const text = parse((await mail.next(i.receiverUserEmail, before.get(i.receiverUserEmail)!)).raw).text;
    const m = /\/#\/accept-invitation\?token=([A-Za-z0-9_-]+)/.exec(text);
    if (!m) throw new Error(`no accept link in:\n${text}`);
    tokens.push(m[1]);
  }
  return { activity: res.activity, ids, tokens, link: tokens };
}

function registration(a: SoftwareAuthenticator, name: string) {
  const challenge = randomBytes(32);
  return { authenticatorName: name, challenge: challenge.toString('base64url'), attestation: a.register(challenge) };
}

const accept = (token: string, authenticator: unknown) => rawPost(`${sigil.url}/sigil/v1/accept_invitation`, { token, authenticator });

describe('invitations', () => {
  it('create_invitations mails a one-time link (stored only as a hash); accepting it with a passkey creates the user, who signs with it', async () => {
    const { tagIds } = await client
      .createUserTag({ type: 'ACTIVITY_TYPE_CREATE_USER_TAG', timestampMs: ts(), organizationId: org(), parameters: { userTagName: 'engineering', userIds: [] } })
      .then((r) => r.activity.result.createUserTagResult!)
      .then((r) => ({ tagIds: [r.userTagId] }));
    const { activity, ids, tokens } = await invite(invitation('dana@example.com', { receiverUserName: 'Dana', receiverUserTags: tagIds }));
    expect(ids).toHaveLength(1);
    const [token] = tokens;
    const received = parse(mail.mails.filter((m) => m.to.includes('dana@example.com')).at(-1)!.raw);
    expect(received.headers.subject).toMatch(/invited/);
    expect(received.text).toContain('http://localhost:3000/#/accept-invitation?token=');
    // The token is nowhere: not in any table, not in the activity as get_activity shows it.
    expect(JSON.stringify(await dbSnapshot(sigil))).not.toContain(token);
    const shown = await client.getActivity({ organizationId: org(), activityId: activity.id });
    expect(JSON.stringify(shown)).not.toContain(token);
    expect(shown.activity.intent.createInvitationsIntent!.invitations[0].receiverUserEmail).toBe('dana@example.com');

    const seen = await rawPost(`${sigil.url}/sigil/v1/get_invitation`, { token });
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({
      organizationId: org(),
      invitation: { invitationId: ids[0], receiverUserName: 'Dana', receiverEmail: 'dana@example.com', receiverUserTags: tagIds, status: 'INVITATION_STATUS_CREATED', accessType: 'ACCESS_TYPE_WEB', senderUserId: sigil.root.userId },
    });

    // Valid for 72 hours by default.
    const createdMs = Number(seen.body.invitation.createdAt.seconds) * 1000 + Number(seen.body.invitation.createdAt.nanos) / 1e6;
    expect(Number(seen.body.expiresAt) - createdMs).toBe(72 * 3600 * 1000);
    expect(received.text).toContain('expires in 72 hours');

    const passkey = new SoftwareAuthenticator();
    device.push(passkey);
    const res = await accept(token, registration(passkey, 'dana laptop'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ organizationId: org(), invitationId: ids[0], userId: expect.any(String) });
    const { user } = await client.getUser({ organizationId: org(), userId: res.body.userId });
    expect(user).toMatchObject({ userName: 'Dana', userEmail: 'dana@example.com', userTags: tagIds, apiKeys: [] });
    expect(user.authenticators.map((a) => [a.authenticatorName, a.credentialId])).toEqual([['dana laptop', passkey.credentialId]]);
    // The audit log has the acceptance (who joined, through which invitation, with which passkey) and still verifies.
    const auditFile = join(sigil.dataDir, 'audit-export.jsonl');
    const exported = runSigil(['audit', 'export', '--data-dir', sigil.dataDir, '--out', auditFile], sigil.env);
    expect(exported.status, exported.stderr).toBe(0);
    const entries = readFileSync(auditFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.kind === 'invitation');
    expect(entries.map((l) => JSON.parse(l.entry))).toEqual([
      expect.objectContaining({ organizationId: org(), invitationId: ids[0], userId: res.body.userId, publicKey: user.authenticators[0].credential.publicKey, status: 'INVITATION_STATUS_ACCEPTED' }),
    ]);
    expect(readFileSync(auditFile, 'utf8')).not.toContain(token);
    const verified = runSigil(['audit', 'verify', '--data-dir', sigil.dataDir], sigil.env);
    expect(verified.status, verified.stderr + verified.stdout).toBe(0);
    // The link reached only that mailbox: the email counts as verified.
    const row = (await dbSnapshot(sigil)).users.find((u: any) => u.id === res.body.userId);
    expect(row.email_verified_at).not.toBeNull();

    // Dana signs with the passkey she registered.
    const dana = new TurnkeyClient({ baseUrl: sigil.url }, new WebauthnStamper({ rpId: 'localhost', allowCredentials: [{ id: passkey.rawId, type: 'public-key' }] }));
    expect(await dana.getWhoami({ organizationId: org() })).toMatchObject({ userId: res.body.userId, username: 'Dana' });

    // The link works once; the refusal says why and changes nothing.
    const before = await dbSnapshot(sigil);
    await expectRefusedUnchanged(sigil, before, await accept(token, registration(new SoftwareAuthenticator(), 'again')), 409, 6, 'CONFLICT', /already accepted/);
    // An accepted invitation cannot be deleted (the user can).
    const del = await rawPost(`${sigil.url}/public/v1/submit/delete_invitation`, activityBody(org(), 'ACTIVITY_TYPE_DELETE_INVITATION', { invitationId: ids[0] }), { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, del, 400, 3, 'REQUEST_INVALID', /already accepted/);
  });

  it('delete_invitation revokes a pending invitation: its link is refused afterwards and changes nothing', async () => {
    const { ids, tokens } = await invite(invitation('erin@example.com'), invitation('frank@example.com'));
    const res = await client.deleteInvitation({ type: 'ACTIVITY_TYPE_DELETE_INVITATION', timestampMs: ts(), organizationId: org(), parameters: { invitationId: ids[0] } });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(res.activity.result.deleteInvitationResult).toEqual({ invitationId: ids[0] });

    const before = await dbSnapshot(sigil);
    await expectRefusedUnchanged(sigil, before, await accept(tokens[0], registration(new SoftwareAuthenticator(), 'erin')), 409, 6, 'CONFLICT', /invitation revoked/);
    await expectRefusedUnchanged(sigil, before, await rawPost(`${sigil.url}/sigil/v1/get_invitation`, { token: tokens[0] }), 409, 6, 'CONFLICT', /invitation revoked/);
    const again = await rawPost(`${sigil.url}/public/v1/submit/delete_invitation`, activityBody(org(), 'ACTIVITY_TYPE_DELETE_INVITATION', { invitationId: ids[0] }), { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, again, 400, 3, 'REQUEST_INVALID', /already revoked/);
    const unknown = await rawPost(`${sigil.url}/public/v1/submit/delete_invitation`, activityBody(org(), 'ACTIVITY_TYPE_DELETE_INVITATION', { invitationId: crypto.randomUUID() }), { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, unknown, 404, 5, 'NOT_FOUND', /invitation not found/);
    // A token that never was, and one that is malformed.
    await expectRefusedUnchanged(sigil, before, await accept(randomBytes(32).toString('base64url'), registration(new SoftwareAuthenticator(), 'x')), 404, 5, 'NOT_FOUND', /invitation not found/);
    await expectRefusedUnchanged(sigil, before, await accept('not a token', registration(new SoftwareAuthenticator(), 'x')), 400, 3, 'REQUEST_INVALID', /token/);
    // A registration for another origin is refused, and the invitation stays usable.
    const bad = registration(new SoftwareAuthenticator({ origin: 'https://evil.example' }), 'frank');
    await expectRefusedUnchanged(sigil, before, await accept(tokens[1], bad), 400, 3, 'REQUEST_INVALID', /attestation/);
    const frank = await accept(tokens[1], registration(new SoftwareAuthenticator(), 'frank'));
    expect(frank.status).toBe(200);
  });

  it('bad input is refused with a clear error and changes nothing; INVITATION / CREATE needs a policy, and allows no revoking', async () => {
    await sdkServerClient(sigil).createUsers({ users: [{ userName: 'gus', userEmail: 'gus@example.com', apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] });
    await invite(invitation('hana@example.com'));
    const before = await dbSnapshot(sigil);
    const sends = mail.mails.length;
    const submit = (invitations: unknown[]) =>
      rawPost(`${sigil.url}/public/v1/submit/create_invitations`, activityBody(org(), 'ACTIVITY_TYPE_CREATE_INVITATIONS', { invitations }), { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, await submit([invitation('not-an-email')]), 400, 3, 'INVALID_EMAIL', /invalid email address: invitations\[0\]\.receiverUserEmail/);
    await expectRefusedUnchanged(sigil, before, await submit([invitation('ivy@example.com', { receiverUserTags: [crypto.randomUUID()] })]), 404, 5, 'NOT_FOUND', /receiverUserTags: user tag not found/);
    await expectRefusedUnchanged(sigil, before, await submit([invitation('ivy@example.com', { senderUserId: crypto.randomUUID() })]), 404, 5, 'NOT_FOUND', /user not found/);
    await expectRefusedUnchanged(sigil, before, await submit([invitation('GUS@example.com')]), 409, 6, 'CONFLICT', /already has the email address/);
    await expectRefusedUnchanged(sigil, before, await submit([invitation('hana@example.com')]), 409, 6, 'CONFLICT', /already has a pending invitation/);
    await expectRefusedUnchanged(sigil, before, await submit([invitation('ivy@example.com'), invitation('Ivy@example.com')]), 400, 3, 'REQUEST_INVALID', /invited twice/);
    await expectRefusedUnchanged(sigil, before, await submit([invitation('ivy@example.com', { receiverUserName: ' ' })]), 400, 3, 'REQUEST_INVALID', /receiverUserName must not be empty/);
    await expectRefusedUnchanged(sigil, before, await submit([]), 400, 3, 'REQUEST_INVALID', /at least one invitation/);
    const { senderUserId: _s, ...noSender } = invitation('ivy@example.com');
    await expectRefusedUnchanged(sigil, before, await submit([noSender]), 400, 3, 'REQUEST_INVALID', /senderUserId/);
    expect(mail.mails.length).toBe(sends);

    // A user with an API key and no policy: INVITATION / CREATE is not allowed.
    const key = newKey();
    await sdkServerClient(sigil).createUsers({
      users: [{ userName: 'jo', apiKeys: [{ apiKeyName: 'jo', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const denied = await rawPost(`${sigil.url}/public/v1/submit/create_invitations`, activityBody(org(), 'ACTIVITY_TYPE_CREATE_INVITATIONS', { invitations: [invitation('kim@example.com')] }), { key });
    expect(denied.status).toBe(403);
    expect(mail.count('kim@example.com')).toBe(0);
    // A policy on INVITATION / CREATE lets the same user invite.
    const joId = (await client.getUsers({ organizationId: org() })).users.find((u) => u.userName === 'jo')!.userId;
    await sdkServerClient(sigil).createPolicy({
      policyName: 'jo invites',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(user, user.id == '${joId}')`,
      condition: "activity.resource == 'INVITATION' && activity.action == 'CREATE'",
      notes: '',
    });
    const allowed = await rawPost(
      `${sigil.url}/public/v1/submit/create_invitations`,
      activityBody(org(), 'ACTIVITY_TYPE_CREATE_INVITATIONS', { invitations: [invitation('kim@example.com', { senderUserId: joId })] }),
      { key },
    );
    expect(allowed.status).toBe(200);
    expect(allowed.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    await mail.next('kim@example.com', 0);
    // …but not revoke: DELETE is another action.
    const revoke = await rawPost(
      `${sigil.url}/public/v1/submit/delete_invitation`,
      activityBody(org(), 'ACTIVITY_TYPE_DELETE_INVITATION', { invitationId: allowed.body.activity.result.createInvitationsResult.invitationIds[0] }),
      { key },
    );
    expect(revoke.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 7, message: expect.stringMatching(/add a policy granting this user permissions/) });
  });
});

describe('list_email_events', () => {
  it('shows Send and Delivery of an OTP email with the server answer, never the code', async () => {
    const email = 'lena@example.com';
    await sdkServerClient(sigil).createUsers({ users: [{ userName: 'lena', userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] });
    const before = mail.count(email);
    await sdkServerClient(sigil).initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Sigil Test' } as never);
    const code = codeIn(await mail.next(email, before));
    const { emailEvents } = await client.listEmailEvents({ organizationId: org(), email: 'LENA@example.com' });
    expect(emailEvents.map((e) => e.eventType)).toEqual(['Delivery', 'Send']);
    const [delivery, send] = emailEvents;
    expect(delivery.messageId).toBe(send.messageId);
    expect(delivery).toMatchObject({ organizationId: org(), fromAddress: 'auth@sigil.test', toAddress: email, messageKind: 'OTP' });
    expect(delivery.details.deliverySmtpResponse).toMatch(/^250 /);
    expect(Number(delivery.timestamp)).toBeGreaterThanOrEqual(Number(send.timestamp));
    // The message id is the one the mail carried.
    expect(parse(mail.mails.filter((m) => m.to.includes(email)).at(-1)!.raw).headers['message-id']).toBe(send.messageId);
    expect(JSON.stringify(emailEvents)).not.toContain(code);
    expect(JSON.stringify(await dbSnapshot(sigil))).not.toContain(code);
  });

  it('a refused recipient gives a Bounce event with the 550 answer; the invitation activity failed and left nothing', async () => {
    const email = 'nobody@example.com';
    const snapshot = await dbSnapshot(sigil);
    const res = await rawPost(`${sigil.url}/public/v1/submit/create_invitations`, activityBody(org(), 'ACTIVITY_TYPE_CREATE_INVITATIONS', { invitations: [invitation(email)] }), { key: sigil.root });
    expect(res.status).toBe(502);
    expect(res.body.message).toMatch(/could not be delivered to nobody@example\.com: no invitation was created/);
    const after = await dbSnapshot(sigil);
    // Only the two email events were added: no invitation, no activity.
    expect({ ...after, email_events: undefined }).toEqual({ ...snapshot, email_events: undefined });
    expect(after.email_events.length - (snapshot.email_events?.length ?? 0)).toBe(2);

    const { emailEvents } = await client.listEmailEvents({ organizationId: org(), email });
    expect(emailEvents.map((e) => e.eventType)).toEqual(['Bounce', 'Send']);
    expect(emailEvents[0]).toMatchObject({ toAddress: email, messageKind: 'INVITATION', details: { bounceType: 'Permanent', diagnosticCode: expect.stringMatching(/^550 /) } });
    const bounces = await client.listEmailEvents({ organizationId: org(), email, eventType: 'Bounce' });
    expect(bounces.emailEvents.map((e) => e.id)).toEqual([emailEvents[0].id]);
  });

  it('pages newest first with event ids as cursors; a foreign cursor is refused', async () => {
    const email = 'mo@example.com';
    await invite(invitation(email));
    const all = (await client.listEmailEvents({ organizationId: org(), email })).emailEvents;
    expect(all.map((e) => e.eventType)).toEqual(['Delivery', 'Send']);
    const first = await client.listEmailEvents({ organizationId: org(), email, paginationOptions: { limit: '1' } });
    expect(first.emailEvents.map((e) => e.id)).toEqual([all[0].id]);
    const next = await client.listEmailEvents({ organizationId: org(), email, paginationOptions: { limit: '1', after: all[0].id } });
    expect(next.emailEvents.map((e) => e.id)).toEqual([all[1].id]);
    const back = await client.listEmailEvents({ organizationId: org(), email, paginationOptions: { before: all[1].id } });
    expect(back.emailEvents.map((e) => e.id)).toEqual([all[0].id]);
    const before = await dbSnapshot(sigil);
    const bad = await rawPost(`${sigil.url}/public/v1/query/list_email_events`, { organizationId: org(), email, paginationOptions: { after: crypto.randomUUID() } }, { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, bad, 400, 3, 'REQUEST_INVALID', /pagination cursor .* is not an email event/);
    const noEmail = await rawPost(`${sigil.url}/public/v1/query/list_email_events`, { organizationId: org() }, { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, noEmail, 400, 3, 'REQUEST_INVALID', /email/);
  });
});

describe('an expired invitation', () => {
  let short: SigilInstance;
  beforeAll(async () => {
    short = await startSigil({ ...smtpEnv(mail), SIGIL_INVITATION_TTL_SECONDS: '1' });
  }, 60_000);
  afterAll(async () => {
    await short?.stop();
  });

  it('is refused once its lifetime (SIGIL_INVITATION_TTL_SECONDS) has passed, and accepting it changes nothing', async () => {
    const email = 'olga@example.com';
    const already = mail.count(email);
    const res = await httpClient(short).createInvitations({
      type: 'ACTIVITY_TYPE_CREATE_INVITATIONS',
      timestampMs: ts(),
      organizationId: short.root.organizationId,
      parameters: { invitations: [{ ...invitation(email), senderUserId: short.root.userId }] },
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const text = parse((await mail.next(email, already)).raw).text;
    expect(text).toContain('expires in 1 seconds');
    const token = /token=([A-Za-z0-9_-]+)/.exec(text)![1];
    await expect
      .poll(async () => (await rawPost(`${short.url}/sigil/v1/get_invitation`, { token })).body.message, { timeout: 30_000, interval: 250 })
      .toMatch(/invitation expired/);
    const before = await dbSnapshot(short);
    await expectRefusedUnchanged(short, before, await rawPost(`${short.url}/sigil/v1/accept_invitation`, { token, authenticator: registration(new SoftwareAuthenticator(), 'late') }), 400, 3, 'REQUEST_INVALID', /invitation expired/);
  });
});
