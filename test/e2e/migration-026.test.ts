// Migration 026 (contacts vouched for by the parent; docs/compatibility.md "Email and SMS logins through
// the parent") on a deployment that has users: the test makes, with @turnkey/sdk-server, a
// sub-organization whose root user's email the parent set, a decoy with the same email written by
// another sub-organization's own key, and a root user whose parent-set email its sub-organization later
// changed; puts the users table back in the shape migration 025 left it (no vouched columns, 026 not
// recorded); restarts Sigil; and checks that only the untouched root user's contact is vouched for, so
// the parent's OTP login for that email still lands in its sub-organization, on either store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptOtpCodeToBundle } from '@turnkey/crypto';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import { serve, startSigil, terminate, type SigilInstance } from '../helpers/sigil.js';
import { newKey, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { execSql } from '../helpers/db-snapshot.js';
import { codeIn, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

let inbox: Inbox;
let sigil: SigilInstance;
const made: Record<string, { id: string; userId: string; key: KeyPair }> = {};

async function subOrganization(name: string, email: string) {
  const key = newKey();
  const r = await sdkServerClient(sigil).createSubOrganization({
    subOrganizationName: name,
    rootUsers: [{ userName: name, userEmail: email, apiKeys: [{ apiKeyName: 'own', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
    rootQuorumThreshold: 1,
  });
  made[name] = { id: r.subOrganizationId, userId: r.rootUserIds![0], key };
}

beforeAll(async () => {
  inbox = await startInbox();
  sigil = await startSigil(smtpEnv(inbox), { process: true });
  await subOrganization('victim', 'old.victim@example.com');
  await subOrganization('attacker', 'old.attacker@example.com');
  await subOrganization('changed', 'old.changed@example.com');
  const attacker = sdkServerClient(sigil, made.attacker.key, made.attacker.id);
  await attacker.createUsers({ users: [{ userName: 'decoy', userEmail: 'old.victim@example.com', apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] });
  // A clock tick, so the change is recorded after the creation.
  await new Promise((r) => setTimeout(r, 5));
  await sdkServerClient(sigil, made.changed.key, made.changed.id).updateUserEmail({ userId: made.changed.userId, userEmail: 'old.victim@example.com' });

  // Back to the users table of migration 025.
  await terminate(sigil.process);
  await execSql(sigil, 'ALTER TABLE users DROP COLUMN email_vouched_at');
  await execSql(sigil, 'ALTER TABLE users DROP COLUMN phone_number_vouched_at');
  await execSql(sigil, `DELETE FROM kysely_migration WHERE name = '026_vouched_contacts'`);
  const restarted = serve(sigil.dataDir, sigil.env);
  // The first instance's stop also removes the data directory and the PostgreSQL schema: the
  // restarted process is stopped first, then that runs (without it the schema stayed behind).
  const first = sigil;
  const stop = async () => {
    await terminate(restarted.child);
    await first.stop();
  };
  sigil = { ...sigil, ...(await restarted.ready), process: restarted.child, stderr: restarted.stderr, stop };
}, 120_000);

afterAll(async () => {
  await sigil?.stop();
  await inbox?.close();
});

describe('migration 026', () => {
  it('vouches for the contacts of root users the parent created and nobody changed since, and only those', async () => {
    const rows = await execSql(sigil, `SELECT organization_id, user_name, email_vouched_at FROM users WHERE user_email = 'old.victim@example.com' ORDER BY user_name`);
    expect(rows.map((r) => [r.user_name, r.email_vouched_at === null ? 'not vouched' : 'vouched'])).toEqual([
      ['changed', 'not vouched'],
      ['decoy', 'not vouched'],
      ['victim', 'vouched'],
    ]);

    // The parent's OTP login for that email lands in the victim's own sub-organization.
    const email = 'old.victim@example.com';
    const api = sdkServerClient(sigil);
    const before = inbox.count(email);
    const { otpId, otpEncryptionTargetBundle } = await api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Parent App' } as never);
    const code = codeIn(await inbox.next(email, before));
    const key = newKey();
    const { verificationToken } = await api.verifyOtp({ otpId, encryptedOtpBundle: await encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, key.apiPublicKey, sigil.root.signerPublicKey) });
    const session = newKey();
    const message = JSON.stringify({ login: { publicKey: session.apiPublicKey }, tokenId: JSON.parse(atob(verificationToken.split('.')[1])).id, type: 'USAGE_TYPE_LOGIN' });
    const signature = await new ApiKeyStamper(key).sign(message, SignatureFormat.Raw);
    const res = await api.otpLogin({ verificationToken, publicKey: session.apiPublicKey, clientSignature: { publicKey: key.apiPublicKey, scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256', message, signature } });
    expect(JSON.parse(atob(res.session.split('.')[1]))).toMatchObject({ organization_id: made.victim.id, user_id: made.victim.userId });
  });
});
