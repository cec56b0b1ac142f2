// App proofs through the official clients: with generateAppProofs the activity carries proofs that
// @turnkey/crypto's verifyAppProofSignature accepts (and rejects once changed), address-derivation
// proofs name exactly the addresses returned for every address format, the boot proof is signed by
// the signer key `sigil init` printed and names the proofs' key, and `sigil verify-proofs` checks it
// all offline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { verifyAppProofSignature } from '@turnkey/crypto';
import { p256 } from '@noble/curves/nist.js';
import { ADDRESS_FORMATS, ADDRESS_FORMAT_TABLE } from '../../src/crypto/addresses/index.js';
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
  const res = await rawPost(`${sigil.url}/public/v1/submit/${op}`, { ...activityBody(org, type, parameters), generateAppProofs }, { key: sigil.root });
  expect(res.status).toBe(200);
  return res.body.activity;
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
    expect(activity.appProofs).toHaveLength(addresses.length);
    for (const [i, proof] of activity.appProofs.entries()) {
      expect(() => verifyAppProofSignature(proof)).not.toThrow();
      const payload = JSON.parse(proof.proofPayload);
      expect(payload).toMatchObject({ type: 'APP_PROOF_TYPE_ADDRESS_DERIVATION', organizationId: org, walletId, derivationPath: accounts[i].path, address: addresses[i] });
      expect(payload.timestampMs).toMatch(/^\d+$/);
    }
    const changed = { ...activity.appProofs[0], proofPayload: activity.appProofs[0].proofPayload.replace(addresses[0], addresses[1]) };
    expect(() => verifyAppProofSignature(changed)).toThrow();

    const listed = await sdkServerClient(sigil).getAppProofs({ activityId: activity.id });
    expect(listed.appProofs).toEqual(activity.appProofs);
  });

  it('signing proofs; nothing without the flag', async () => {
    const api = sdkServerClient(sigil);
    const { addresses } = await api.createWallet({ walletName: 'signer', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] });
    const params = { signWith: addresses[0], payload: '0x' + '33'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' };
    const signed = await submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', params);
    expect(signed.appProofs).toHaveLength(1);
    verifyAppProofSignature(signed.appProofs[0]);
    const { r, s, v } = signed.result.signRawPayloadResult;
    expect(JSON.parse(signed.appProofs[0].proofPayload)).toMatchObject({
      type: 'APP_PROOF_TYPE_SIGNATURE',
      organizationId: org,
      signWith: addresses[0],
      payloadDigest: createHash('sha256').update(params.payload).digest('hex'),
      signature: r + s + v,
    });
    const plain = await submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', { ...params, payload: '0x' + '44'.repeat(32) }, false);
    expect(plain.appProofs).toEqual([]);
  });

  it('the boot proof is signed by the init signer key, and verify-proofs checks an activity offline', async () => {
    const activity = await submit('create_private_keys', 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2', {
      privateKeys: [{ privateKeyName: 'proven-key', curve: 'CURVE_ED25519', privateKeyTags: [], addressFormats: ['ADDRESS_FORMAT_SOLANA', 'ADDRESS_FORMAT_SUI'] }],
    });
    expect(activity.appProofs).toHaveLength(2);
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
    writeFileSync(join(dir, 'activity.json'), JSON.stringify({ activity }));
    writeFileSync(join(dir, 'boot.json'), JSON.stringify({ bootProof }));
    const ok = runSigil(['verify-proofs', '--activity', join(dir, 'activity.json'), '--boot-proof', join(dir, 'boot.json'), '--signer', sigil.root.signerPublicKey], sigil.env);
    expect(ok.stdout).not.toMatch(/FAIL/);
    expect(ok.status).toBe(0);
    const tampered = { ...activity, appProofs: [{ ...activity.appProofs[0], proofPayload: activity.appProofs[0].proofPayload.replace('"timestampMs":"', '"timestampMs":"9') }] };
    writeFileSync(join(dir, 'tampered.json'), JSON.stringify(tampered));
    const bad = runSigil(['verify-proofs', '--activity', join(dir, 'tampered.json'), '--boot-proof', join(dir, 'boot.json'), '--signer', sigil.root.signerPublicKey], sigil.env);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/FAIL proof 0 signature holds/);
    const otherSigner = runSigil(['verify-proofs', '--activity', join(dir, 'activity.json'), '--boot-proof', join(dir, 'boot.json'), '--signer', '04' + 'ab'.repeat(64)], sigil.env);
    expect(otherSigner.status).toBe(1);
  });
});
