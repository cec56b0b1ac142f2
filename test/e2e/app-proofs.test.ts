// App proofs through the official clients: with generateAppProofs the activity carries proofs that
// @turnkey/crypto's verifyAppProofSignature accepts (and rejects once changed), in the documented
// payload shapes (docs/reference/activities.md "App proofs and events"; tkhq/sdk packages/crypto proof
// tests): address-derivation proofs `{type, timestampMs, addressDerivationProof}` name exactly the
// addresses returned for every address format, and every activity's policy-outcome proof `{type,
// timestampMs, policyOutcomeProof}` names its request (computeActivityFingerprint) and its signed
// approvals (verifyStampSignature). The boot proof is signed by the signer key `sigil init` printed and
// names the proofs' key, and `sigil verify-proofs` checks it all offline.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { computeActivityFingerprint, verifyAppProofSignature, verifyStampSignature } from '@turnkey/crypto';
import { p256 } from '@noble/curves/nist.js';
import { ADDRESS_FORMATS, ADDRESS_FORMAT_TABLE } from '../../src/chains/addresses/index.js';
import { startSigil, runSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient } from '../helpers/clients.js';

let sigil: SigilInstance;
let org: string;
beforeAll(async () => {
  sigil = await startSigil();
  org = sigil.root.organizationId;
});
afterAll(async () => {
  await sigil?.stop();
});

async function submit(op: string, type: string, parameters: unknown, generateAppProofs = true) {
  const body = JSON.stringify({ ...activityBody(org, type, parameters), generateAppProofs });
  const res = await rawPost(`${sigil.url}/public/v1/submit/${op}`, body, { key: sigil.root });
  expect(res.status).toBe(200);
  return { ...res.body.activity, sentBody: body };
}

const payloadOf = (proof: { proofPayload: string }) => JSON.parse(proof.proofPayload);

/** The policy-outcome proof of an activity: its request, its organization and its signed approval. */
async function expectOutcomeProof(activity: any, organizationId = org) {
  const proof = activity.appProofs.at(-1);
  expect(() => verifyAppProofSignature(proof)).not.toThrow();
  const payload = payloadOf(proof);
  expect(Object.keys(payload)).toEqual(['type', 'timestampMs', 'policyOutcomeProof']);
  expect(payload).toMatchObject({
    type: 'APP_PROOF_TYPE_POLICY_OUTCOME',
    timestampMs: expect.stringMatching(/^\d+$/),
    policyOutcomeProof: {
      organizationId,
      outcome: 'OUTCOME_ALLOW',
      organizationDataDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
      parentOrganizationDataDigest: '',
    },
  });
  const outcome = payload.policyOutcomeProof;
  expect(`sha256:${outcome.decisionContextDigest}`).toBe(computeActivityFingerprint(activity.sentBody));
  expect(`sha256:${outcome.decisionContextDigest}`).toBe(activity.fingerprint);
  expect(outcome.userRequestApprovals).toHaveLength(1);
  const [approval] = outcome.userRequestApprovals;
  // A body carrying bearer secrets is kept as its fingerprint; the signature is over the body itself.
  const secret = approval.message.startsWith('sha256:');
  expect(approval).toMatchObject({ scheme: 'SIGNATURE_SCHEME_TK_API_P256', publicKey: sigil.root.apiPublicKey, message: secret ? activity.fingerprint : activity.sentBody });
  expect(await verifyStampSignature(approval.publicKey, approval.signature, activity.sentBody)).toBe(true);
  return outcome;
}

describe('app proofs', () => {
  it('create_wallet proves every derived address, for every address format', async () => {
    const accounts = ADDRESS_FORMATS.map((addressFormat, i) => ({
      curve: ADDRESS_FORMAT_TABLE[addressFormat].curves[0],
      pathFormat: 'PATH_FORMAT_BIP32',
      path: `m/44'/${i}'/0'`,
      addressFormat,
    }));
    const activity = await submit('create_wallet', 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'proven', accounts });
    const { walletId, addresses } = activity.result.createWalletResult;
    expect(addresses).toHaveLength(ADDRESS_FORMATS.length);
    // One proof per derived address, then the policy outcome that let the activity run.
    expect(activity.appProofs).toHaveLength(addresses.length + 1);
    for (const [i, proof] of activity.appProofs.slice(0, -1).entries()) {
      expect(() => verifyAppProofSignature(proof)).not.toThrow();
      const payload = payloadOf(proof);
      expect(payload).toEqual({
        type: 'APP_PROOF_TYPE_ADDRESS_DERIVATION',
        timestampMs: expect.stringMatching(/^\d+$/),
        addressDerivationProof: { organizationId: org, walletId, derivationPath: accounts[i].path, address: addresses[i] },
      });
    }
    const outcome = await expectOutcomeProof(activity);
    // The organization's data digest follows what decides there: a new policy changes it.
    await sdkServerClient(sigil).createPolicy({ policyName: 'digest', effect: 'EFFECT_DENY', condition: "activity.type == 'ACTIVITY_TYPE_DELETE_WALLETS'", notes: '' });
    const later = await submit('create_wallet', 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'proven again', accounts: accounts.slice(0, 1) });
    expect((await expectOutcomeProof(later)).organizationDataDigest).not.toBe(outcome.organizationDataDigest);
    const changed = { ...activity.appProofs[0], proofPayload: activity.appProofs[0].proofPayload.replace(addresses[0], addresses[1]) };
    expect(() => verifyAppProofSignature(changed)).toThrow();

    const listed = await sdkServerClient(sigil).getAppProofs({ activityId: activity.id });
    expect(listed.appProofs).toEqual(activity.appProofs);
  });

  it('a sub-organization proves its wallet in the sub-organization and the decision in the parent', async () => {
    const activity = await submit('create_sub_organization', 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', {
      subOrganizationName: 'proven sub',
      rootUsers: [{ userName: 'u', userEmail: 'u@example.com', apiKeys: [], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
      wallet: { walletName: 'w', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] },
    });
    const { subOrganizationId, wallet } = activity.result.createSubOrganizationResultV8;
    expect(activity.appProofs).toHaveLength(2);
    expect(payloadOf(activity.appProofs[0]).addressDerivationProof).toEqual({ organizationId: subOrganizationId, walletId: wallet.walletId, derivationPath: "m/44'/60'/0'/0/0", address: wallet.addresses[0] });
    await expectOutcomeProof(activity);
  });

  it('signing proofs; nothing without the flag', async () => {
    const api = sdkServerClient(sigil);
    const { addresses } = await api.createWallet({ walletName: 'signer', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] });
    const params = { signWith: addresses[0], payload: '0x' + '33'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' };
    const signed = await submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', params);
    // Only the documented types: a signing activity proves its policy outcome.
    expect(signed.appProofs).toHaveLength(1);
    await expectOutcomeProof(signed);
    const plain = await submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', { ...params, payload: '0x' + '44'.repeat(32) }, false);
    expect(plain.appProofs).toEqual([]);
  });

  it('the boot proof is signed by the init signer key, and verify-proofs checks an activity offline', async () => {
    const activity = await submit('create_private_keys', 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2', {
      privateKeys: [{ privateKeyName: 'proven-key', curve: 'CURVE_ED25519', privateKeyTags: [], addressFormats: ['ADDRESS_FORMAT_SOLANA', 'ADDRESS_FORMAT_SUI'] }],
    });
    // A private key's addresses have no wallet and no path.
    expect(activity.appProofs).toHaveLength(3);
    const keyAddresses = activity.result.createPrivateKeysResultV2.privateKeys[0].addresses.map((a: { address: string }) => a.address);
    expect(activity.appProofs.slice(0, 2).map((p: { proofPayload: string }) => payloadOf(p).addressDerivationProof)).toEqual(keyAddresses.map((address: string) => ({ organizationId: org, address })));
    await expectOutcomeProof(activity);
    const ephemeralKey = activity.appProofs[0].publicKey;
    const { bootProof } = await sdkServerClient(sigil).getBootProof({ ephemeralKey });
    expect(bootProof.ephemeralPublicKeyHex).toBe(ephemeralKey);
    expect(bootProof.awsAttestationDocB64).toBe('');
    const statement = Buffer.from(bootProof.qosManifestB64, 'base64').toString('utf8');
    const envelope = JSON.parse(Buffer.from(bootProof.qosManifestEnvelopeB64, 'base64').toString('utf8'));
    const digest = createHash('sha256').update(statement).digest();
    expect(p256.verify(Buffer.from(envelope.signature, 'hex'), digest, Buffer.from(sigil.root.signerPublicKey, 'hex'), { prehash: false, format: 'der' })).toBe(true);
    expect(JSON.parse(statement)).toMatchObject({ ephemeralPublicKeyHex: ephemeralKey, app: 'sigil' });
    expect((await sdkServerClient(sigil).getLatestBootProof({ appName: 'sigil' })).bootProof.ephemeralPublicKeyHex).toBe(ephemeralKey);

    const dir = mkdtempSync(join(tmpdir(), 'sigil-proofs-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'activity.json'), JSON.stringify({ activity }));
    writeFileSync(join(dir, 'boot.json'), JSON.stringify({ bootProof }));
    const ok = runSigil(['verify-proofs', '--activity', join(dir, 'activity.json'), '--boot-proof', join(dir, 'boot.json'), '--signer', sigil.root.signerPublicKey], sigil.env);
    expect(ok.stdout).not.toMatch(/FAIL/);
    expect(ok.stdout).toMatch(/ok   proof 2 decided the activity's request \(its fingerprint\)/);
    expect(ok.stdout).toMatch(/ok   proof 0 derives an address of the activity's result/);
    expect(ok.status).toBe(0);
    // A proof of another activity's request is refused although its signature holds.
    const moved = { ...activity, fingerprint: `sha256:${'0'.repeat(64)}` };
    writeFileSync(join(dir, 'moved.json'), JSON.stringify(moved));
    const other = runSigil(['verify-proofs', '--activity', join(dir, 'moved.json'), '--boot-proof', join(dir, 'boot.json'), '--signer', sigil.root.signerPublicKey], sigil.env);
    expect(other.status).toBe(1);
    expect(other.stdout).toMatch(/FAIL proof 2 decided the activity's request/);
    const tampered = { ...activity, appProofs: [{ ...activity.appProofs[0], proofPayload: activity.appProofs[0].proofPayload.replace('"timestampMs":"', '"timestampMs":"9') }] };
    writeFileSync(join(dir, 'tampered.json'), JSON.stringify(tampered));
    const bad = runSigil(['verify-proofs', '--activity', join(dir, 'tampered.json'), '--boot-proof', join(dir, 'boot.json'), '--signer', sigil.root.signerPublicKey], sigil.env);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/FAIL proof 0 signature holds/);
    const otherSigner = runSigil(['verify-proofs', '--activity', join(dir, 'activity.json'), '--boot-proof', join(dir, 'boot.json'), '--signer', '04' + 'ab'.repeat(64)], sigil.env);
    expect(otherSigner.status).toBe(1);
  });
});
