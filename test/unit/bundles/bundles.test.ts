// Tests for src/crypto/bundles.ts with the REAL client functions of @turnkey/crypto@2.13.2
// (decryptCredentialBundle, decryptExportBundle, encryptWalletToBundle, encryptPrivateKeyToBundle,
// encryptOtpCodeToBundle) and with bundles produced by Turnkey's production enclaves
// (test/vectors/bundles.json). Contract: docs/reference/bundles.md "The bundles", "Other signed tokens".
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { codeOf } from '../../helpers/crypto-errors.js';
import { base58 } from '@scure/base';
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  PRODUCTION_SIGNER_SIGN_PUBLIC_KEY,
  decryptCredentialBundle,
  decryptExportBundle,
  encryptOtpCodeToBundle,
  encryptPrivateKeyToBundle,
  encryptWalletToBundle,
  generateP256KeyPair as sdkGenerateP256KeyPair,
} from '@turnkey/crypto';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import {
  BUNDLE_VERSION,
  formatHpkeBundle,
  makeCredentialBundle,
  makeExportBundle,
  makeImportBundle,
  makeOtpEncryptionTargetBundle,
  makeSignedBundle,
  openCredentialBundle,
  openExportBundle,
  openImportBundle,
  openOtpBundle,
  parseHpkeBundle,
  verifySignedBundle,
} from '../../../src/crypto/bundles.js';
import { seal } from '../../../src/crypto/hpke.js';
import {
  P256Signer,
  bytesToHex,
  generateP256KeyPair,
  hexToBytes,
  verifyP256Der,
} from '../../../src/crypto/p256.js';

const vectors = JSON.parse(readFileSync(new URL('../../vectors/bundles.json', import.meta.url), 'utf8'));
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const ORG = '5f0b5a2c-1a63-4d77-9d53-3f1d1f3c9b11';
const OTHER_ORG = 'b0a7f3f2-7a0e-4a51-a8d5-3c0b9c6a2e42';
const USER = '7d4a885d-4668-40c4-8f35-33301e11e7d5';
const OTHER_USER = '0c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';

// The deployment's bundle signer (docs/design.md "Security model"). Clients pass its uncompressed hex as
// dangerouslyOverrideSignerPublicKey.
const signerKeys = generateP256KeyPair();
const signer = new P256Signer(signerKeys.privateKey);
const SIGNER_PUB = signer.publicKeyUncompressedHex;


/** Re-sign an envelope after changing its data, so only the HPKE layer can notice the tampering. */
function resign(bundle: string, mutate: (data: Record<string, string>) => void): string {
  const env = JSON.parse(bundle);
  const data = JSON.parse(Buffer.from(env.data, 'hex').toString('utf8'));
  mutate(data);
  return makeSignedBundle(data, signer);
}

function flipHexByte(hex: string, byteIndex: number): string {
  const b = hexToBytes(hex);
  b[byteIndex] ^= 0x01;
  return bytesToHex(b);
}

// ---------------------------------------------------------------------------------------------------

describe('credential bundle', () => {
  test('decryptCredentialBundle recovers the API private key, and that key stamps requests', async () => {
    const embedded = sdkGenerateP256KeyPair(); // the client's embedded key; its public half is targetPublicKey
    for (const targetPublicKey of [embedded.publicKey, embedded.publicKeyUncompressed]) {
      const apiKey = generateP256KeyPair(); // the API key the server registers on the user
      const bundle = makeCredentialBundle({ plaintext: apiKey.privateKey, targetPublicKey });
      expect(bundle).toMatch(/^[1-9A-HJ-NP-Za-km-z]+$/); // base58 alphabet
      const privHex = decryptCredentialBundle(bundle, embedded.privateKey);
      expect(privHex).toBe(bytesToHex(apiKey.privateKey));

      // The client uses the pair as an X-Stamp API key; the stamp verifies under the registered key.
      const stamper = new ApiKeyStamper({ apiPublicKey: bytesToHex(apiKey.publicKey), apiPrivateKey: privHex });
      const body = '{"organizationId":"' + ORG + '"}';
      const stamp = JSON.parse(Buffer.from((await stamper.stamp(body)).stampHeaderValue, 'base64url').toString());
      expect(stamp.publicKey).toBe(bytesToHex(apiKey.publicKey));
      expect(verifyP256Der(apiKey.publicKey, utf8(body), stamp.signature)).toBe(true);

      expect(bytesToHex(openCredentialBundle({ credentialBundle: bundle, receiverPrivateKey: embedded.privateKey }))).toBe(
        bytesToHex(apiKey.privateKey),
      );
    }
  });

  test('the SDK refuses the bundle under a different embedded key, and a corrupted bundle', () => {
    const embedded = sdkGenerateP256KeyPair();
    const bundle = makeCredentialBundle({ plaintext: generateP256KeyPair().privateKey, targetPublicKey: embedded.publicKey });
    expect(() => decryptCredentialBundle(bundle, sdkGenerateP256KeyPair().privateKey)).toThrow(/Error decrypting bundle/);
    const raw = base58.decode(bundle);
    raw[40] ^= 1; // breaks the bs58check checksum
    expect(() => decryptCredentialBundle(base58.encode(raw), embedded.privateKey)).toThrow();
    expect(codeOf(() => openCredentialBundle({ credentialBundle: base58.encode(raw), receiverPrivateKey: embedded.privateKey }))).toBe(
      'MALFORMED_BUNDLE',
    );
    expect(codeOf(() => openCredentialBundle({ credentialBundle: bundle, receiverPrivateKey: sdkGenerateP256KeyPair().privateKey }))).toBe(
      'DECRYPTION_FAILED',
    );
  });

  test('opens the production fixture', () => {
    for (const v of vectors.credentialBundles) {
      expect(bytesToHex(openCredentialBundle({ credentialBundle: v.credentialBundle, receiverPrivateKey: v.receiverPrivateKey }))).toBe(
        v.plaintextHex,
      );
      expect(decryptCredentialBundle(v.credentialBundle, v.receiverPrivateKey)).toBe(v.plaintextHex);
    }
  });
});

// ---------------------------------------------------------------------------------------------------

describe('signed envelope', () => {
  test('field order, encodings and signature are as clients and Turnkey produce them', () => {
    const bundle = makeSignedBundle({ b: '2', a: '1' }, signer);
    expect(Object.keys(JSON.parse(bundle))).toEqual(['version', 'data', 'dataSignature', 'enclaveQuorumPublic']);
    const env = JSON.parse(bundle);
    expect(env.version).toBe(BUNDLE_VERSION);
    expect(env.data).toMatch(/^[0-9a-f]+$/);
    expect(Buffer.from(env.data, 'hex').toString('utf8')).toBe('{"b":"2","a":"1"}');
    expect(env.enclaveQuorumPublic).toBe(SIGNER_PUB);
    expect(env.enclaveQuorumPublic).toMatch(/^04[0-9a-f]{128}$/);
    expect(env.dataSignature).toMatch(/^30[0-9a-f]+$/);
    expect(verifyP256Der(SIGNER_PUB, hexToBytes(env.data), env.dataSignature)).toBe(true);
    expect(verifySignedBundle(bundle, signer.publicKey).data).toEqual({ b: '2', a: '1' });
  });

  test('verifySignedBundle rejects another signer, a bad signature and malformed input', () => {
    const bundle = makeSignedBundle({ a: '1' }, signer);
    const env = JSON.parse(bundle);
    expect(codeOf(() => verifySignedBundle(bundle, generateP256KeyPair().publicKey))).toBe('SIGNER_MISMATCH');
    expect(codeOf(() => verifySignedBundle(JSON.stringify({ ...env, dataSignature: flipHexByte(env.dataSignature, 10) }), SIGNER_PUB))).toBe(
      'BAD_SIGNATURE',
    );
    expect(codeOf(() => verifySignedBundle(JSON.stringify({ ...env, data: bytesToHex(utf8('{"a":"2"}')) }), SIGNER_PUB))).toBe('BAD_SIGNATURE');
    expect(codeOf(() => verifySignedBundle(JSON.stringify({ ...env, dataSignature: 'zz' }), SIGNER_PUB))).toBe('BAD_SIGNATURE');
    expect(codeOf(() => verifySignedBundle(JSON.stringify({ ...env, data: undefined }), SIGNER_PUB))).toBe('MALFORMED_BUNDLE');
    expect(codeOf(() => verifySignedBundle('not json', SIGNER_PUB))).toBe('MALFORMED_BUNDLE');
    expect(codeOf(() => verifySignedBundle('[]', SIGNER_PUB))).toBe('MALFORMED_BUNDLE');
    // Signed data that is not a JSON object is refused even when the signature is good.
    const notObject = JSON.stringify({ ...env, data: bytesToHex(utf8('"x"')), dataSignature: signer.signDer(utf8('"x"')) });
    expect(codeOf(() => verifySignedBundle(notObject, SIGNER_PUB))).toBe('MALFORMED_BUNDLE');
  });

  test('verifies the production-signed fixtures with the production signer key', () => {
    expect(vectors.productionSignerPublicKey).toBe(PRODUCTION_SIGNER_SIGN_PUBLIC_KEY);
    for (const v of [...vectors.exportBundles, ...vectors.importBundles]) {
      const { data } = verifySignedBundle(v.exportBundle ?? v.importBundle, PRODUCTION_SIGNER_SIGN_PUBLIC_KEY);
      expect(data.organizationId).toBe(v.organizationId);
      expect(codeOf(() => verifySignedBundle(v.exportBundle ?? v.importBundle, SIGNER_PUB))).toBe('SIGNER_MISMATCH');
    }
  });
});

// ---------------------------------------------------------------------------------------------------

describe('export bundle', () => {
  const embedded = sdkGenerateP256KeyPair(); // the client's target key for export

  test('wallet: decryptExportBundle returns the mnemonic with the signer override', async () => {
    const bundle = makeExportBundle({
      plaintext: utf8(MNEMONIC),
      targetPublicKey: embedded.publicKeyUncompressed,
      organizationId: ORG,
      signerPrivateKey: signer,
    });
    const data = JSON.parse(Buffer.from(JSON.parse(bundle).data, 'hex').toString('utf8'));
    expect(Object.keys(data)).toEqual(['encappedPublic', 'ciphertext', 'organizationId']); // as in Turnkey's bundles
    expect(data.encappedPublic).toMatch(/^04[0-9a-f]{128}$/);
    expect(data.organizationId).toBe(ORG);

    const mnemonic = await decryptExportBundle({
      exportBundle: bundle,
      embeddedKey: embedded.privateKey,
      organizationId: ORG,
      dangerouslyOverrideSignerPublicKey: SIGNER_PUB,
      returnMnemonic: true,
    });
    expect(mnemonic).toBe(MNEMONIC);
  });

  test('private key (HEXADECIMAL) with a compressed targetPublicKey and a raw-key signer', async () => {
    const key = generateP256KeyPair().privateKey;
    const bundle = makeExportBundle({
      plaintext: key,
      targetPublicKey: embedded.publicKey, // 66-hex target: must be uncompressed internally
      organizationId: ORG,
      signerPrivateKey: bytesToHex(signerKeys.privateKey),
    });
    const hex = await decryptExportBundle({
      exportBundle: bundle,
      embeddedKey: embedded.privateKey,
      organizationId: ORG,
      dangerouslyOverrideSignerPublicKey: SIGNER_PUB,
      keyFormat: 'HEXADECIMAL',
      returnMnemonic: false,
    });
    expect(hex).toBe(bytesToHex(key));
    expect(bytesToHex(openExportBundle({ exportBundle: bundle, receiverPrivateKey: embedded.privateKey, organizationId: ORG, signerPublicKey: SIGNER_PUB }))).toBe(
      bytesToHex(key),
    );
  });

  test('private key (SOLANA): the client returns bs58(seed ‖ ed25519 pub)', async () => {
    const seed = ed25519.utils.randomSecretKey();
    const bundle = makeExportBundle({ plaintext: seed, targetPublicKey: embedded.publicKey, organizationId: ORG, signerPrivateKey: signer });
    const out = await decryptExportBundle({
      exportBundle: bundle,
      embeddedKey: embedded.privateKey,
      organizationId: ORG,
      dangerouslyOverrideSignerPublicKey: SIGNER_PUB,
      keyFormat: 'SOLANA',
      returnMnemonic: false,
    });
    const expected = base58.encode(Uint8Array.from([...seed, ...ed25519.getPublicKey(seed)]));
    expect(out).toBe(expected);
  });

  test('the client rejects: no override (pinned production key), wrong org, tampered signature, tampered ciphertext, wrong key', async () => {
    const bundle = makeExportBundle({ plaintext: utf8(MNEMONIC), targetPublicKey: embedded.publicKey, organizationId: ORG, signerPrivateKey: signer });
    const base = { embeddedKey: embedded.privateKey, organizationId: ORG, dangerouslyOverrideSignerPublicKey: SIGNER_PUB, returnMnemonic: true };

    await expect(decryptExportBundle({ ...base, exportBundle: bundle, dangerouslyOverrideSignerPublicKey: undefined })).rejects.toThrow(
      /expected signer key 04cf288fe433cc4e.* does not match/,
    );
    await expect(decryptExportBundle({ ...base, exportBundle: bundle, organizationId: OTHER_ORG })).rejects.toThrow(
      /organization id does not match expected value/,
    );

    const env = JSON.parse(bundle);
    const badSig = JSON.stringify({ ...env, dataSignature: flipHexByte(env.dataSignature, 12) });
    await expect(decryptExportBundle({ ...base, exportBundle: badSig })).rejects.toThrow();

    const badCt = resign(bundle, (d) => {
      d.ciphertext = flipHexByte(d.ciphertext, 3);
    });
    await expect(decryptExportBundle({ ...base, exportBundle: badCt })).rejects.toThrow(/hpkeDecrypt/);
    await expect(decryptExportBundle({ ...base, exportBundle: bundle, embeddedKey: sdkGenerateP256KeyPair().privateKey })).rejects.toThrow(
      /hpkeDecrypt/,
    );

    // The same cases through our own inverse, with explicit codes.
    const ours = { receiverPrivateKey: embedded.privateKey, organizationId: ORG, signerPublicKey: SIGNER_PUB };
    expect(codeOf(() => openExportBundle({ ...ours, exportBundle: bundle, organizationId: OTHER_ORG }))).toBe('ORGANIZATION_MISMATCH');
    expect(codeOf(() => openExportBundle({ ...ours, exportBundle: badSig }))).toBe('BAD_SIGNATURE');
    expect(codeOf(() => openExportBundle({ ...ours, exportBundle: badCt }))).toBe('DECRYPTION_FAILED');
    expect(codeOf(() => openExportBundle({ ...ours, exportBundle: bundle, signerPublicKey: PRODUCTION_SIGNER_SIGN_PUBLIC_KEY }))).toBe(
      'SIGNER_MISMATCH',
    );
  });

  test('input validation', () => {
    const p = { plaintext: utf8('x'), targetPublicKey: embedded.publicKey, organizationId: ORG, signerPrivateKey: signer };
    expect(codeOf(() => makeExportBundle({ ...p, organizationId: '' }))).toBe('INVALID_INPUT');
    expect(codeOf(() => makeExportBundle({ ...p, plaintext: 'x' as unknown as Uint8Array }))).toBe('INVALID_INPUT');
    expect(codeOf(() => makeExportBundle({ ...p, targetPublicKey: 'abcd' }))).toBe('INVALID_PUBLIC_KEY');
    expect(codeOf(() => makeExportBundle({ ...p, signerPrivateKey: new Uint8Array(32) }))).toBe('INVALID_PRIVATE_KEY');
  });

  test('opens the production fixtures (wallet and private key)', async () => {
    for (const v of vectors.exportBundles) {
      const pt = openExportBundle({
        exportBundle: v.exportBundle,
        receiverPrivateKey: v.receiverPrivateKey,
        organizationId: v.organizationId,
        signerPublicKey: PRODUCTION_SIGNER_SIGN_PUBLIC_KEY,
      });
      expect(bytesToHex(pt)).toBe(v.plaintextHex);
      if (v.mnemonic) expect(Buffer.from(pt).toString('utf8')).toBe(v.mnemonic);
      // and the real client agrees on the same fixture
      const sdk = await decryptExportBundle({
        exportBundle: v.exportBundle,
        embeddedKey: v.receiverPrivateKey,
        organizationId: v.organizationId,
        returnMnemonic: false,
      });
      expect(sdk).toBe(v.plaintextHex);
    }
  });
});

// ---------------------------------------------------------------------------------------------------

describe('import bundle', () => {
  function init(organizationId = ORG, userId = USER) {
    const target = generateP256KeyPair(); // kept server side with the bundle
    const importBundle = makeImportBundle({ organizationId, userId, targetPublicKey: target.publicKey, signerPrivateKey: signer });
    return { target, importBundle };
  }

  test('bundle shape matches Turnkey import bundles', () => {
    const { target, importBundle } = init();
    const data = JSON.parse(Buffer.from(JSON.parse(importBundle).data, 'hex').toString('utf8'));
    expect(data).toEqual({ targetPublic: bytesToHex(target.publicKeyUncompressed), organizationId: ORG, userId: USER });
    for (const v of vectors.importBundles) {
      const real = verifySignedBundle(v.importBundle, PRODUCTION_SIGNER_SIGN_PUBLIC_KEY).data;
      expect(Object.keys(data)).toEqual(Object.keys(real));
      expect(real.targetPublic).toMatch(/^04[0-9a-f]{128}$/);
      expect(real.userId).toBe(v.userId);
    }
  });

  test('encryptWalletToBundle -> openImportBundle returns the mnemonic', async () => {
    const { target, importBundle } = init();
    const encryptedBundle = await encryptWalletToBundle({
      mnemonic: MNEMONIC,
      importBundle,
      userId: USER,
      organizationId: ORG,
      dangerouslyOverrideSignerPublicKey: SIGNER_PUB,
    });
    expect(Object.keys(JSON.parse(encryptedBundle))).toEqual(['encappedPublic', 'ciphertext']);
    const pt = openImportBundle({ encryptedBundle, importBundle, targetPrivateKey: target.privateKey, organizationId: ORG, userId: USER, signerPublicKey: SIGNER_PUB });
    expect(Buffer.from(pt).toString('utf8')).toBe(MNEMONIC);
  });

  test('encryptPrivateKeyToBundle HEXADECIMAL (with and without 0x) and SOLANA', async () => {
    const { target, importBundle } = init();
    const open = (encryptedBundle: string) =>
      openImportBundle({ encryptedBundle, importBundle, targetPrivateKey: bytesToHex(target.privateKey), organizationId: ORG, userId: USER, signerPublicKey: signer.publicKey });
    const key = generateP256KeyPair().privateKey;
    for (const privateKey of [bytesToHex(key), '0x' + bytesToHex(key)]) {
      const enc = await encryptPrivateKeyToBundle({ privateKey, keyFormat: 'HEXADECIMAL', importBundle, userId: USER, organizationId: ORG, dangerouslyOverrideSignerPublicKey: SIGNER_PUB });
      expect(bytesToHex(open(enc))).toBe(bytesToHex(key));
    }
    const seed = ed25519.utils.randomSecretKey();
    const solanaKey = base58.encode(Uint8Array.from([...seed, ...ed25519.getPublicKey(seed)]));
    const enc = await encryptPrivateKeyToBundle({ privateKey: solanaKey, keyFormat: 'SOLANA', importBundle, userId: USER, organizationId: ORG, dangerouslyOverrideSignerPublicKey: SIGNER_PUB });
    expect(bytesToHex(open(enc))).toBe(bytesToHex(seed));
  });

  test('the client refuses a bundle for another org or user, or without the signer override', async () => {
    const { importBundle } = init();
    const p = { mnemonic: MNEMONIC, importBundle, userId: USER, organizationId: ORG, dangerouslyOverrideSignerPublicKey: SIGNER_PUB };
    await expect(encryptWalletToBundle({ ...p, organizationId: OTHER_ORG })).rejects.toThrow(/organization id does not match/);
    await expect(encryptWalletToBundle({ ...p, userId: OTHER_USER })).rejects.toThrow(/user id does not match/);
    await expect(encryptWalletToBundle({ ...p, dangerouslyOverrideSignerPublicKey: undefined })).rejects.toThrow(/does not match signer key/);
    const env = JSON.parse(importBundle);
    await expect(encryptWalletToBundle({ ...p, importBundle: JSON.stringify({ ...env, dataSignature: flipHexByte(env.dataSignature, 8) }) })).rejects.toThrow();
  });

  test('the server refuses wrong org, wrong user, wrong target key, tampered or foreign bundles', async () => {
    const { target, importBundle } = init();
    const encryptedBundle = await encryptWalletToBundle({ mnemonic: MNEMONIC, importBundle, userId: USER, organizationId: ORG, dangerouslyOverrideSignerPublicKey: SIGNER_PUB });
    const p: Parameters<typeof openImportBundle>[0] = {
      encryptedBundle,
      importBundle,
      targetPrivateKey: target.privateKey,
      organizationId: ORG,
      userId: USER,
      signerPublicKey: SIGNER_PUB,
    };
    const open = (over: Partial<typeof p>) => codeOf(() => openImportBundle({ ...p, ...over }));

    expect(open({})).toBeUndefined();
    expect(open({ organizationId: OTHER_ORG })).toBe('ORGANIZATION_MISMATCH');
    expect(open({ userId: OTHER_USER })).toBe('USER_MISMATCH');
    expect(open({ targetPrivateKey: generateP256KeyPair().privateKey })).toBe('TARGET_KEY_MISMATCH');
    expect(open({ signerPublicKey: generateP256KeyPair().publicKey })).toBe('SIGNER_MISMATCH');
    const env = JSON.parse(importBundle);
    expect(open({ importBundle: JSON.stringify({ ...env, dataSignature: flipHexByte(env.dataSignature, 20) }) })).toBe('BAD_SIGNATURE');

    const enc = JSON.parse(encryptedBundle);
    expect(open({ encryptedBundle: JSON.stringify({ ...enc, ciphertext: flipHexByte(enc.ciphertext, 0) }) })).toBe('DECRYPTION_FAILED');
    expect(open({ encryptedBundle: JSON.stringify({ ...enc, encappedPublic: bytesToHex(generateP256KeyPair().publicKeyUncompressed) }) })).toBe(
      'DECRYPTION_FAILED',
    );
    expect(open({ encryptedBundle: 'nope' })).toBe('MALFORMED_BUNDLE');
    expect(open({ encryptedBundle: JSON.stringify({ encappedPublic: enc.encappedPublic }) })).toBe('MALFORMED_BUNDLE');
    expect(open({ encryptedBundle: JSON.stringify({ ...enc, encappedPublic: '04' + '11'.repeat(64) }) })).toBe('MALFORMED_BUNDLE');

    // A ciphertext made for another user's import session does not open under this session,
    // even when the request names the matching org/user for this session.
    const other = init(ORG, OTHER_USER);
    const foreign = await encryptWalletToBundle({ mnemonic: MNEMONIC, importBundle: other.importBundle, userId: OTHER_USER, organizationId: ORG, dangerouslyOverrideSignerPublicKey: SIGNER_PUB });
    expect(open({ encryptedBundle: foreign })).toBe('DECRYPTION_FAILED');
  });

  test('makeImportBundle validates its inputs', () => {
    const t = generateP256KeyPair().publicKey;
    expect(codeOf(() => makeImportBundle({ organizationId: ORG, userId: '', targetPublicKey: t, signerPrivateKey: signer }))).toBe('INVALID_INPUT');
    expect(codeOf(() => makeImportBundle({ organizationId: '', userId: USER, targetPublicKey: t, signerPrivateKey: signer }))).toBe('INVALID_INPUT');
    expect(codeOf(() => makeImportBundle({ organizationId: ORG, userId: USER, targetPublicKey: '02' + 'ff'.repeat(32), signerPrivateKey: signer }))).toBe(
      'INVALID_PUBLIC_KEY',
    );
  });

  test('the real client accepts a production import bundle (pinned key) and checks its user', async () => {
    const v = vectors.importBundles[0];
    const out = await encryptWalletToBundle({ mnemonic: MNEMONIC, importBundle: v.importBundle, userId: v.userId, organizationId: v.organizationId });
    const parsed = parseHpkeBundle(out);
    expect(parsed.encappedPublic.length).toBe(65);
    await expect(encryptWalletToBundle({ mnemonic: MNEMONIC, importBundle: v.importBundle, userId: OTHER_USER, organizationId: v.organizationId })).rejects.toThrow(
      /user id does not match/,
    );
  });
});

// ---------------------------------------------------------------------------------------------------

describe('OTP encryption target bundle', () => {
  test('encryptOtpCodeToBundle (with override) -> openOtpBundle gives the code and client public key', async () => {
    const target = generateP256KeyPair();
    const bundle = makeOtpEncryptionTargetBundle({ targetPublicKey: target.publicKey, signerPrivateKey: signer });
    const data = verifySignedBundle(bundle, SIGNER_PUB).data;
    expect(data).toEqual({ targetPublic: bytesToHex(target.publicKeyUncompressed) });

    const session = sdkGenerateP256KeyPair();
    const encryptedOtpBundle = await encryptOtpCodeToBundle('A1B2C3', bundle, session.publicKey, SIGNER_PUB);
    expect(openOtpBundle({ encryptedOtpBundle, targetPrivateKey: target.privateKey })).toEqual({ otpCode: 'A1B2C3', publicKey: session.publicKey });
  });

  test('without the override the client checks the TLS fetcher key and refuses', async () => {
    const target = generateP256KeyPair();
    const bundle = makeOtpEncryptionTargetBundle({ targetPublicKey: target.publicKey, signerPrivateKey: signer });
    await expect(encryptOtpCodeToBundle('123456', bundle, sdkGenerateP256KeyPair().publicKey)).rejects.toThrow(/expected signer key 046b4f88/);
  });

  test('openOtpBundle rejects wrong key, tampering and bad plaintext', () => {
    const target = generateP256KeyPair();
    const session = generateP256KeyPair();
    const good = formatHpkeBundle(seal(target.publicKey, utf8(JSON.stringify({ otp_code: '123456', public_key: bytesToHex(session.publicKey) }))));
    expect(openOtpBundle({ encryptedOtpBundle: good, targetPrivateKey: target.privateKey }).otpCode).toBe('123456');
    expect(codeOf(() => openOtpBundle({ encryptedOtpBundle: good, targetPrivateKey: generateP256KeyPair().privateKey }))).toBe('DECRYPTION_FAILED');
    const g = JSON.parse(good);
    expect(codeOf(() => openOtpBundle({ encryptedOtpBundle: JSON.stringify({ ...g, ciphertext: flipHexByte(g.ciphertext, 2) }), targetPrivateKey: target.privateKey }))).toBe(
      'DECRYPTION_FAILED',
    );
    const sealJson = (obj: unknown) => formatHpkeBundle(seal(target.publicKey, utf8(JSON.stringify(obj))));
    for (const bad of [{ public_key: bytesToHex(session.publicKey) }, { otp_code: '', public_key: bytesToHex(session.publicKey) }, { otp_code: '1', public_key: 'abcd' }, { otp_code: 1, public_key: bytesToHex(session.publicKey) }, ['x']]) {
      expect(codeOf(() => openOtpBundle({ encryptedOtpBundle: sealJson(bad), targetPrivateKey: target.privateKey }))).toBe('MALFORMED_BUNDLE');
    }
    const notUtf8 = formatHpkeBundle(seal(target.publicKey, Uint8Array.of(0xff, 0xfe)));
    expect(codeOf(() => openOtpBundle({ encryptedOtpBundle: notUtf8, targetPrivateKey: target.privateKey }))).toBe('MALFORMED_BUNDLE');
  });
});
