// Signups in shared commits (docs/design.md "Signups in shared commits"): create_sub_organization
// prepares everything before any transaction and its inserts join the grouped commit that records the
// activity, so concurrent signups share commits. Through @turnkey/sdk-server: 50 concurrent signups all succeed
// with distinct sub-organizations, users, wallets and addresses, each address checked with viem
// (a signature by the sub-organization's key recovers to it), and the commits were shared. In the
// same burst, signups that fail (bad input; a wallet repeating an account name; a verification token
// another signup of the burst spent first, which fails inside the shared commit itself) create
// nothing and leave their neighbours untouched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptOtpCodeToBundle, generateP256KeyPair } from '@turnkey/crypto';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import { recoverAddress, type Hex } from 'viem';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { codeIn, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

let inbox: Inbox;
let sigil: SigilInstance;

beforeAll(async () => {
  inbox = await startInbox();
  sigil = await startSigil(smtpEnv(inbox));
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await inbox?.close();
});

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

/** A key-bound verification token for `email` with the signup usage signature its key makes (as @turnkey/core does). */
async function signupProof(email: string) {
  const key = newKey();
  const api = sdkServerClient(sigil);
  const before = inbox.count(email);
  const { otpId, otpEncryptionTargetBundle } = await api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Sigil Test' } as never);
  const code = codeIn(await inbox.next(email, before));
  const encryptedOtpBundle = await encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, key.apiPublicKey, sigil.root.signerPublicKey);
  const { verificationToken } = await api.verifyOtp({ otpId, encryptedOtpBundle });
  const message = JSON.stringify({ signupV2: { email }, tokenId: JSON.parse(atob(verificationToken.split('.')[1])).id, type: 'USAGE_TYPE_SIGNUP' });
  const signature = await new ApiKeyStamper(key).sign(message, SignatureFormat.Raw);
  return { verificationToken, clientSignature: { publicKey: key.apiPublicKey, scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256', message, signature } };
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${sigil.url}/metrics`)).text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'm').exec(text);
  if (!m) throw new Error(`no ${name} in /metrics`);
  return Number(m[1]);
}

const signup = (name: string, key: KeyPair, extra: Record<string, unknown> = {}, email = `${name.replace(/ /g, '.')}@example.com`) => ({
  subOrganizationName: name,
  rootUsers: [{ userName: name, userEmail: email, apiKeys: [{ apiKeyName: 'device', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' as const }], authenticators: [], oauthProviders: [] }],
  rootQuorumThreshold: 1,
  wallet: { walletName: 'default', accounts: [ETH] },
  ...extra,
});

describe('signups in shared commits', () => {
  it('50 concurrent signups succeed with distinct wallets; failing ones beside them create nothing and fail nobody else', async () => {
    const parent = sdkServerClient(sigil);
    const tag = Math.random().toString(16).slice(2, 8);
    const users = Array.from({ length: 50 }, (_, i) => ({ name: `batch ${tag} ${i}`, key: newKey() }));
    // Two signups carry the same verification token: both pass every check made before the commit,
    // and only one can spend it there.
    const shared = `shared.${tag}@example.com`;
    const proof = await signupProof(shared);
    const failing = [
      // Bad input: the API key is no P-256 public key.
      { name: `bad key ${tag}`, body: signup(`bad key ${tag}`, { apiPublicKey: '02' + 'zz'.repeat(32), apiPrivateKey: '' }), error: /invalid api key public key/ },
      // A wallet whose two accounts repeat one name.
      {
        name: `repeated name ${tag}`,
        body: signup(`repeated name ${tag}`, newKey(), { wallet: { walletName: 'w', accounts: [{ ...ETH, name: 'main' }, { ...ETH, path: "m/44'/60'/0'/0/1", name: 'main' }] } }),
        error: /repeats accounts\[0\]\.name/,
      },
    ];
    const racing = [0, 1].map((i) => ({ name: `token ${tag} ${i}`, body: signup(`token ${tag} ${i}`, newKey(), proof, shared) }));

    const groupsBefore = await metric('sigil_commit_groups_total');
    const unitsBefore = await metric('sigil_commit_group_units_total');
    // Sent amid the good ones, so the failures land in commits that hold other signups.
    const calls = [
      ...users.map((u) => () => parent.createSubOrganization(signup(u.name, u.key))),
      ...failing.map((f) => () => parent.createSubOrganization(f.body as never)),
      ...racing.map((r) => () => parent.createSubOrganization(r.body as never)),
    ];
    const sendOrder = calls.map((_, i) => i).sort((a, b) => ((a * 7919) % 53) - ((b * 7919) % 53));
    const started = new Map(sendOrder.map((i) => [i, calls[i]()]));
    const settled = await Promise.allSettled(calls.map((_, i) => started.get(i)!));
    const groups = (await metric('sigil_commit_groups_total')) - groupsBefore;
    const units = (await metric('sigil_commit_group_units_total')) - unitsBefore;

    // Every good signup succeeded, each with its own sub-organization, user, wallet and address.
    const ok = settled.slice(0, users.length).map((s, i) => {
      if (s.status !== 'fulfilled') throw new Error(`signup ${i} failed: ${String((s as PromiseRejectedResult).reason)}`);
      return s.value;
    });
    for (const field of [(r: (typeof ok)[number]) => r.subOrganizationId, (r: (typeof ok)[number]) => r.rootUserIds[0], (r: (typeof ok)[number]) => r.wallet!.walletId, (r: (typeof ok)[number]) => r.wallet!.addresses[0]]) {
      expect(new Set(ok.map(field)).size).toBe(users.length);
    }
    // Commits were shared: fewer commits than the units they recorded.
    expect(units).toBeGreaterThan(groups);

    // Each address is the one of the key that signs for it, recovered by viem from a signature.
    await Promise.all(
      ok.map(async (r, i) => {
        const user = sdkServerClient(sigil, users[i].key, r.subOrganizationId);
        expect(await user.getWhoami({})).toMatchObject({ organizationId: r.subOrganizationId, userId: r.rootUserIds[0], organizationName: users[i].name });
        const hash = `0x${(i + 1).toString(16).padStart(64, '0')}` as Hex;
        const sig = await user.signRawPayload({ signWith: r.wallet!.addresses[0], payload: hash, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
        const recovered = await recoverAddress({ hash, signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number(sig.v) } });
        expect(recovered.toLowerCase()).toBe(r.wallet!.addresses[0].toLowerCase());
        // The parent finds the end user by the email and the public key it wrote.
        expect((await parent.getSubOrgIds({ filterType: 'PUBLIC_KEY', filterValue: users[i].key.apiPublicKey })).organizationIds).toEqual([r.subOrganizationId]);
      }),
    );

    // The failing ones: a clear error each, and no trace of them.
    for (const [k, f] of failing.entries()) {
      const s = settled[users.length + k];
      expect(s.status).toBe('rejected');
      expect(String((s as PromiseRejectedResult).reason)).toMatch(f.error);
      expect((await parent.getSubOrgIds({ filterType: 'NAME', filterValue: f.name })).organizationIds).toEqual([]);
    }
    // Of the two signups with one token, exactly one succeeded; the other was refused in the commit
    // itself and left nothing, and the contact is verified in the winner's sub-organization only.
    const tokenResults = settled.slice(users.length + failing.length);
    const won = tokenResults.filter((s) => s.status === 'fulfilled');
    const lost = tokenResults.filter((s) => s.status === 'rejected') as PromiseRejectedResult[];
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(String(lost[0].reason)).toMatch(/already been used/);
    const winner = (won[0] as PromiseFulfilledResult<(typeof ok)[number]>).value;
    const loserName = racing[tokenResults.indexOf(lost[0])].name;
    expect((await parent.getSubOrgIds({ filterType: 'NAME', filterValue: loserName })).organizationIds).toEqual([]);
    expect((await parent.getSubOrgIds({ filterType: 'EMAIL', filterValue: shared })).organizationIds).toEqual([winner.subOrganizationId]);
    expect((await parent.getVerifiedSubOrgIds({ filterType: 'EMAIL', filterValue: shared })).organizationIds).toEqual([winner.subOrganizationId]);
  }, 300_000);
});
