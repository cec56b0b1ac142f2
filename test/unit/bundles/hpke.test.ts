// Tests for src/crypto/hpke.ts: byte-exact and round-trip agreement with the client (@turnkey/crypto
// hpkeEncrypt/hpkeDecrypt) and with an independent RFC 9180 implementation (@hpke/core), plus
// tamper detection. Contract: docs/reference/bundles.md "The HPKE suite".
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createBase58check } from '@scure/base';
import { describe, expect, test } from 'vitest';
import { codeOf } from '../../helpers/crypto-errors.js';
import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core';
import { formatHpkeBuf, generateP256KeyPair as sdkGenerateP256KeyPair, hpkeDecrypt, hpkeEncrypt } from '@turnkey/crypto';
import { HPKE_INFO, KEY_SCHEDULE_CONTEXT, open, seal, sealWithEphemeralKey } from '../../../src/crypto/hpke.js';
import {
  bytesToHex,
  compressPublicKey,
  concatBytes,
  generateP256KeyPair,
  hexToBytes,
} from '../../../src/crypto/p256.js';

const vectors = JSON.parse(readFileSync(new URL('../../vectors/bundles.json', import.meta.url), 'utf8'));
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));


const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
const info = utf8(HPKE_INFO);
const ab = (u: Uint8Array) => u.slice().buffer as ArrayBuffer;

describe('key schedule', () => {
  test('key_schedule_context equals the one baked into the SDK constant AES_KEY_INFO', () => {
    const aesKeyInfo = hexToBytes(vectors.hpkeKeyScheduleContext.aesKeyInfoHex);
    // AES_KEY_INFO = I2OSP(32,2) ‖ "HPKE-v1" ‖ suite_id ‖ "key" ‖ key_schedule_context
    const prefix = concatBytes(Uint8Array.of(0, 32), utf8('HPKE-v1'), utf8('HPKE'), Uint8Array.of(0, 0x10, 0, 1, 0, 2), utf8('key'));
    expect(bytesToHex(aesKeyInfo.subarray(0, prefix.length))).toBe(bytesToHex(prefix));
    expect(bytesToHex(KEY_SCHEDULE_CONTEXT)).toBe(bytesToHex(aesKeyInfo.subarray(prefix.length)));
    expect(KEY_SCHEDULE_CONTEXT.length).toBe(65);
  });
});

describe('agreement with @turnkey/crypto', () => {
  test('our seal opens with the SDK hpkeDecrypt (receiver key given compressed or uncompressed)', () => {
    const receiver = sdkGenerateP256KeyPair();
    for (const target of [receiver.publicKey, receiver.publicKeyUncompressed, hexToBytes(receiver.publicKey)]) {
      const pt = utf8('the quick brown fox ' + Math.random());
      const sealed = seal(target, pt);
      expect(sealed.encappedPublic.length).toBe(65);
      expect(sealed.encappedPublic[0]).toBe(0x04);
      expect(sealed.ciphertext.length).toBe(pt.length + 16);
      const out = hpkeDecrypt({
        ciphertextBuf: sealed.ciphertext,
        encappedKeyBuf: sealed.encappedPublic,
        receiverPriv: receiver.privateKey,
      });
      expect(bytesToHex(out)).toBe(bytesToHex(pt));
    }
  });

  test('the SDK hpkeEncrypt (as used by encryptWalletToBundle) opens with our open', () => {
    const receiver = generateP256KeyPair();
    const pt = utf8('leaf lady until indicate praise final route toast cake minimum insect unknown');
    // The client seals to the uncompressed targetPublic from the import/OTP bundle.
    const buf = hpkeEncrypt({ plainTextBuf: pt, targetKeyBuf: receiver.publicKeyUncompressed });
    const json = JSON.parse(formatHpkeBuf(buf));
    expect(bytesToHex(open(receiver.privateKey, json.encappedPublic, json.ciphertext))).toBe(bytesToHex(pt));
    // The compressed enc at the front of the raw hpkeEncrypt output works too (credential-bundle framing).
    expect(bytesToHex(open(bytesToHex(receiver.privateKey), buf.subarray(0, 33), buf.subarray(33)))).toBe(bytesToHex(pt));
  });

  test('empty and large plaintexts round-trip', () => {
    const receiver = sdkGenerateP256KeyPair();
    for (const pt of [new Uint8Array(0), new Uint8Array(100_000).fill(7)]) {
      const sealed = seal(receiver.publicKey, pt);
      expect(bytesToHex(hpkeDecrypt({ ciphertextBuf: sealed.ciphertext, encappedKeyBuf: sealed.encappedPublic, receiverPriv: receiver.privateKey }))).toBe(bytesToHex(pt));
      expect(bytesToHex(open(receiver.privateKey, sealed.encappedPublic, sealed.ciphertext))).toBe(bytesToHex(pt));
    }
  });

  test('opens the production credential bundle fixture', () => {
    for (const v of vectors.credentialBundles) {
      // bs58check-decode here so this test exercises hpke.ts alone (bundles.ts is tested separately)
      const sha = (d: Uint8Array) => new Uint8Array(createHash('sha256').update(d).digest());
      const raw = createBase58check(sha).decode(v.credentialBundle);
      expect(bytesToHex(open(v.receiverPrivateKey, raw.subarray(0, 33), raw.subarray(33)))).toBe(v.plaintextHex);
    }
  });
});

describe('agreement with @hpke/core (independent RFC 9180 implementation)', () => {
  test('@hpke/core opens our seal with info "turnkey_hpke" and AAD enc‖pkR', async () => {
    const receiver = generateP256KeyPair();
    const pt = utf8('hello from sigil');
    const sealed = seal(receiver.publicKey, pt);
    const recipientKey = await suite.kem.importKey('jwk', jwkPrivate(receiver), false);
    const ctx = await suite.createRecipientContext({ recipientKey, enc: ab(sealed.encappedPublic), info: ab(info) });
    const aad = concatBytes(sealed.encappedPublic, receiver.publicKeyUncompressed);
    const out = new Uint8Array(await ctx.open(ab(sealed.ciphertext), ab(aad)));
    expect(bytesToHex(out)).toBe(bytesToHex(pt));
    // and the AAD really is bound: an empty AAD (plain HPKE) fails
    const ctx2 = await suite.createRecipientContext({ recipientKey, enc: ab(sealed.encappedPublic), info: ab(info) });
    await expect(ctx2.open(ab(sealed.ciphertext))).rejects.toThrow();
  });

  test('our open opens a @hpke/core seal', async () => {
    const receiver = generateP256KeyPair();
    const pt = utf8('hello from hpke-js');
    const recipientPublicKey = await suite.kem.importKey('raw', ab(receiver.publicKeyUncompressed), true);
    const sender = await suite.createSenderContext({ recipientPublicKey, info: ab(info) });
    const enc = new Uint8Array(sender.enc);
    const ct = new Uint8Array(await sender.seal(ab(pt), ab(concatBytes(enc, receiver.publicKeyUncompressed))));
    expect(bytesToHex(open(receiver.privateKey, enc, ct))).toBe(bytesToHex(pt));
  });

  test('byte-exact with @hpke/core for a fixed ephemeral key', async () => {
    const receiver = generateP256KeyPair();
    const eph = generateP256KeyPair();
    const pt = utf8('deterministic');
    const ours = sealWithEphemeralKey(eph.privateKey, receiver.publicKey, pt);
    const ekm = {
      privateKey: await suite.kem.importKey('jwk', jwkPrivate(eph), false),
      publicKey: await suite.kem.importKey('raw', ab(eph.publicKeyUncompressed), true),
    };
    const recipientPublicKey = await suite.kem.importKey('raw', ab(receiver.publicKeyUncompressed), true);
    const sender = await suite.createSenderContext({ recipientPublicKey, info: ab(info), ekm });
    const enc = new Uint8Array(sender.enc);
    const ct = new Uint8Array(await sender.seal(ab(pt), ab(concatBytes(enc, receiver.publicKeyUncompressed))));
    expect(bytesToHex(ours.encappedPublic)).toBe(bytesToHex(enc));
    expect(bytesToHex(ours.ciphertext)).toBe(bytesToHex(ct));
    // deterministic for the same inputs, different for another ephemeral key
    expect(bytesToHex(sealWithEphemeralKey(eph.privateKey, receiver.publicKeyUncompressed, pt).ciphertext)).toBe(bytesToHex(ct));
    expect(bytesToHex(seal(receiver.publicKey, pt).ciphertext)).not.toBe(bytesToHex(ct));
  });
});

describe('tamper and misuse', () => {
  const receiver = generateP256KeyPair();
  const pt = utf8('secret material');
  const sealed = seal(receiver.publicKey, pt);

  test('flipping any ciphertext or tag byte fails with DECRYPTION_FAILED', () => {
    for (const i of [0, 5, sealed.ciphertext.length - 17, sealed.ciphertext.length - 1]) {
      const ct = sealed.ciphertext.slice();
      ct[i] ^= 0x01;
      expect(codeOf(() => open(receiver.privateKey, sealed.encappedPublic, ct))).toBe('DECRYPTION_FAILED');
    }
    expect(codeOf(() => open(receiver.privateKey, sealed.encappedPublic, sealed.ciphertext.subarray(0, 10)))).toBe('DECRYPTION_FAILED');
    expect(codeOf(() => open(receiver.privateKey, sealed.encappedPublic, sealed.ciphertext.subarray(0, sealed.ciphertext.length - 1)))).toBe('DECRYPTION_FAILED');
  });

  test('a different (valid) enc or the wrong receiver key fails with DECRYPTION_FAILED', () => {
    const other = generateP256KeyPair();
    expect(codeOf(() => open(receiver.privateKey, other.publicKeyUncompressed, sealed.ciphertext))).toBe('DECRYPTION_FAILED');
    expect(codeOf(() => open(other.privateKey, sealed.encappedPublic, sealed.ciphertext))).toBe('DECRYPTION_FAILED');
  });

  test('compressed enc is equivalent to uncompressed enc (the KEM context always uses 65 bytes)', () => {
    expect(bytesToHex(open(receiver.privateKey, compressPublicKey(sealed.encappedPublic), sealed.ciphertext))).toBe(bytesToHex(pt));
  });

  test('invalid keys are reported as key errors, not decryption errors', () => {
    const bad = sealed.encappedPublic.slice();
    bad[64] ^= 1;
    expect(codeOf(() => open(receiver.privateKey, bad, sealed.ciphertext))).toBe('INVALID_PUBLIC_KEY');
    expect(codeOf(() => open(new Uint8Array(32), sealed.encappedPublic, sealed.ciphertext))).toBe('INVALID_PRIVATE_KEY');
    expect(codeOf(() => seal('02' + 'ff'.repeat(32), pt))).toBe('INVALID_PUBLIC_KEY');
    expect(codeOf(() => seal(receiver.publicKey, 'not bytes' as unknown as Uint8Array))).toBe('INVALID_INPUT');
  });
});

function jwkPrivate(kp: { privateKey: Uint8Array; publicKeyUncompressed: Uint8Array }): JsonWebKey {
  const b = (u: Uint8Array) => Buffer.from(u).toString('base64url');
  return {
    kty: 'EC',
    crv: 'P-256',
    d: b(kp.privateKey),
    x: b(kp.publicKeyUncompressed.subarray(1, 33)),
    y: b(kp.publicKeyUncompressed.subarray(33)),
  };
}
