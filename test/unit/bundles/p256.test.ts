// Tests for src/crypto/p256.ts against the real client code (@turnkey/crypto, @turnkey/api-key-stamper)
// and an independent implementation (@noble/curves). Contract:
// docs/reference/api.md "Stamps"; docs/reference/sessions.md "Login activities" (client signatures).
import { describe, expect, test } from 'vitest';
import { codeOf } from '../../helpers/crypto-errors.js';
import { verify as nodeVerify, createPublicKey } from 'node:crypto';
import { p256 as nobleP256 } from '@noble/curves/nist.js';
import {
  compressRawPublicKey,
  generateP256KeyPair as sdkGenerateP256KeyPair,
  toDerSignature,
  uncompressRawPublicKey,
  verifyStampSignature,
} from '@turnkey/crypto';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import {
  P256Signer,
  P256_N,
  bytesToHex,
  compressPublicKey,
  compressPublicKeyHex,
  decompressPublicKey,
  decompressPublicKeyHex,
  ecdhP256,
  generateP256KeyPair,
  hexToBytes,
  isValidPrivateKey,
  isValidPublicKey,
  parseDerSignature,
  publicKeyFromPrivate,
  rawToDerSignature,
  sha256,
  signP256Der,
  verifyP256Der,
  verifyP256Raw,
} from '../../../src/crypto/p256.js';

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));


function bigTo32(n: bigint): Uint8Array {
  return hexToBytes(n.toString(16).padStart(64, '0'));
}

describe('public key encoding', () => {
  test('compress/decompress agree with the SDK (compressRawPublicKey / uncompressRawPublicKey)', () => {
    for (let i = 0; i < 20; i++) {
      const kp = sdkGenerateP256KeyPair();
      expect(compressPublicKeyHex(kp.publicKeyUncompressed)).toBe(kp.publicKey);
      expect(decompressPublicKeyHex(kp.publicKey)).toBe(kp.publicKeyUncompressed);
      expect(bytesToHex(compressPublicKey(hexToBytes(kp.publicKey)))).toBe(kp.publicKey);
      expect(bytesToHex(decompressPublicKey(hexToBytes(kp.publicKeyUncompressed)))).toBe(kp.publicKeyUncompressed);
      expect(bytesToHex(uncompressRawPublicKey(compressPublicKey(kp.publicKeyUncompressed)))).toBe(kp.publicKeyUncompressed);
      expect(bytesToHex(compressRawPublicKey(decompressPublicKey(kp.publicKey)))).toBe(kp.publicKey);
    }
  });

  test('uppercase hex input is accepted and output is lowercase', () => {
    const kp = sdkGenerateP256KeyPair();
    expect(compressPublicKeyHex(kp.publicKeyUncompressed.toUpperCase())).toBe(kp.publicKey);
  });

  test('rejects wrong lengths, prefixes, off-curve points and bad hex', () => {
    const kp = sdkGenerateP256KeyPair();
    const offCurve = hexToBytes(kp.publicKeyUncompressed);
    offCurve[64] ^= 1;
    const badX = new Uint8Array(33).fill(0xff);
    badX[0] = 0x02; // x >= p
    const cases: unknown[] = [
      offCurve,
      badX,
      kp.publicKey.slice(2), // 32 bytes
      '05' + kp.publicKey.slice(2), // bad prefix
      '04' + kp.publicKey.slice(2), // 04 prefix with 33 bytes
      '0x' + kp.publicKey,
      kp.publicKey + '0',
      '',
      '00',
    ];
    for (const c of cases) {
      expect(codeOf(() => decompressPublicKey(c as string))).toBe('INVALID_PUBLIC_KEY');
      expect(isValidPublicKey(c as string)).toBe(false);
    }
    expect(isValidPublicKey(kp.publicKey)).toBe(true);
  });
});

describe('private keys', () => {
  test('generateP256KeyPair gives a consistent pair (checked with noble)', () => {
    for (let i = 0; i < 20; i++) {
      const kp = generateP256KeyPair();
      expect(kp.privateKey.length).toBe(32);
      expect(bytesToHex(kp.publicKey)).toBe(bytesToHex(nobleP256.getPublicKey(kp.privateKey, true)));
      expect(bytesToHex(kp.publicKeyUncompressed)).toBe(bytesToHex(nobleP256.getPublicKey(kp.privateKey, false)));
      expect(bytesToHex(publicKeyFromPrivate(kp.privateKey))).toBe(bytesToHex(kp.publicKey));
      expect(bytesToHex(publicKeyFromPrivate(bytesToHex(kp.privateKey), false))).toBe(bytesToHex(kp.publicKeyUncompressed));
    }
  });

  test('range and length checks', () => {
    expect(isValidPrivateKey(new Uint8Array(32))).toBe(false);
    expect(isValidPrivateKey(bigTo32(P256_N))).toBe(false);
    expect(isValidPrivateKey(bigTo32(P256_N - 1n))).toBe(true);
    expect(isValidPrivateKey(bigTo32(1n))).toBe(true);
    expect(isValidPrivateKey(new Uint8Array(31).fill(1))).toBe(false);
    expect(codeOf(() => publicKeyFromPrivate('zz'.repeat(32)))).toBe('INVALID_PRIVATE_KEY');
    // A small scalar has leading zero bytes: must still round-trip at 32 bytes.
    expect(bytesToHex(publicKeyFromPrivate(bigTo32(1n), false))).toBe(bytesToHex(nobleP256.getPublicKey(bigTo32(1n), false)));
  });
});

describe('ECDH', () => {
  test('x-coordinate shared secret matches noble, both directions and both key encodings', () => {
    const a = generateP256KeyPair();
    const b = generateP256KeyPair();
    const noble = nobleP256.getSharedSecret(a.privateKey, b.publicKey, true).subarray(1);
    expect(bytesToHex(ecdhP256(a.privateKey, b.publicKey))).toBe(bytesToHex(noble));
    expect(bytesToHex(ecdhP256(b.privateKey, a.publicKeyUncompressed))).toBe(bytesToHex(noble));
    expect(ecdhP256(a.privateKey, b.publicKey).length).toBe(32);
  });

  test('rejects an off-curve peer key', () => {
    const a = generateP256KeyPair();
    const bad = Uint8Array.from(generateP256KeyPair().publicKeyUncompressed);
    bad[40] ^= 0x10;
    expect(codeOf(() => ecdhP256(a.privateKey, bad))).toBe('INVALID_PUBLIC_KEY');
  });
});

describe('DER parsing', () => {
  const r = new Uint8Array(32).fill(0x11);
  const s = new Uint8Array(32).fill(0x22);

  test('minimal DER round-trips through rawToDerSignature/parseDerSignature', () => {
    const raw = Uint8Array.from([...r, ...s]);
    expect(bytesToHex(parseDerSignature(rawToDerSignature(raw)))).toBe(bytesToHex(raw));
    // high bit set -> sign byte added, and small values -> shortened integers
    const raw2 = Uint8Array.from([...new Uint8Array(32).fill(0x80), ...bigTo32(5n)]);
    const der2 = rawToDerSignature(raw2);
    expect(bytesToHex(der2)).toBe('3026022100' + '80'.repeat(32) + '020105');
    expect(bytesToHex(parseDerSignature(der2))).toBe(bytesToHex(raw2));
  });

  test('accepts the non-minimal integers toDerSignature emits (leading 0x00 kept)', () => {
    const rz = Uint8Array.from([0x00, 0x00, ...new Uint8Array(30).fill(0x7f)]);
    const raw = Uint8Array.from([...rz, ...s]);
    const der = toDerSignature(bytesToHex(raw));
    expect(der.startsWith('304402200000')).toBe(true); // SDK keeps the zero bytes
    expect(bytesToHex(parseDerSignature(der))).toBe(bytesToHex(raw));
  });

  test('rejects malformed encodings with INVALID_SIGNATURE', () => {
    const good = bytesToHex(rawToDerSignature(Uint8Array.from([...r, ...s])));
    const bad = [
      '',
      '30',
      '31' + good.slice(2), // wrong SEQUENCE tag
      '3081' + good.slice(2), // long-form length
      good + '00', // trailing byte
      '3045' + good.slice(4), // SEQUENCE length mismatch
      good.slice(0, 4) + '03' + good.slice(6), // wrong INTEGER tag for r
      '3046' + '0222' + '00'.repeat(2) + '11'.repeat(32) + '0220' + '22'.repeat(32), // r length 34
      '3045' + '0221' + '01' + '11'.repeat(32) + '0220' + '22'.repeat(32), // 33-byte r without zero pad
      '3024' + '0200' + '0220' + '22'.repeat(32), // zero-length r
      'zz',
    ];
    for (const b of bad) expect(codeOf(() => parseDerSignature(b))).toBe('INVALID_SIGNATURE');
  });
});

describe('verify', () => {
  test('verifies X-Stamp DER signatures and clientSignature raw signatures made by @turnkey/api-key-stamper', async () => {
    const kp = sdkGenerateP256KeyPair();
    const body = JSON.stringify({ organizationId: 'org', timestampMs: String(Date.now()), parameters: { x: 'é' } });
    for (const runtimeOverride of ['node', 'purejs'] as const) {
      const stamper = new ApiKeyStamper({ apiPublicKey: kp.publicKey, apiPrivateKey: kp.privateKey, runtimeOverride });
      const { stampHeaderName, stampHeaderValue } = await stamper.stamp(body);
      expect(stampHeaderName).toBe('X-Stamp');
      const stamp = JSON.parse(Buffer.from(stampHeaderValue, 'base64url').toString('utf8'));
      expect(verifyP256Der(stamp.publicKey, utf8(body), stamp.signature)).toBe(true);
      expect(verifyP256Der(stamp.publicKey, utf8(body + ' '), stamp.signature)).toBe(false);

      const raw = await stamper.sign(body, SignatureFormat.Raw);
      expect(raw).toMatch(/^[0-9a-f]{128}$/);
      expect(verifyP256Raw(kp.publicKey, utf8(body), raw)).toBe(true);
      expect(verifyP256Raw(kp.publicKeyUncompressed, utf8(body), hexToBytes(raw))).toBe(true);
      expect(verifyP256Raw(kp.publicKey, utf8(body.toUpperCase()), raw)).toBe(false);
    }
  });

  test('rejects a signature under a different key', () => {
    const a = generateP256KeyPair();
    const b = generateP256KeyPair();
    const msg = utf8('hello');
    const sig = signP256Der(a.privateKey, msg);
    expect(verifyP256Der(a.publicKey, msg, sig)).toBe(true);
    expect(verifyP256Der(b.publicKey, msg, sig)).toBe(false);
  });

  test('accepts high-S (no low-S rule)', () => {
    const kp = generateP256KeyPair();
    const msg = utf8('high s');
    const raw = new P256Signer(kp.privateKey).signRaw(msg);
    const s = BigInt('0x' + bytesToHex(raw.subarray(32)));
    const highS = Uint8Array.from([...raw.subarray(0, 32), ...bigTo32(P256_N - s)]);
    expect(BigInt('0x' + bytesToHex(highS.subarray(32))) > P256_N / 2n).toBe(true);
    expect(verifyP256Raw(kp.publicKey, msg, highS)).toBe(true);
    expect(verifyP256Der(kp.publicKey, msg, rawToDerSignature(highS))).toBe(true);
  });

  test('accepts non-minimal DER that OpenSSL itself rejects (EIP-191-style toDerSignature output)', () => {
    const kp = generateP256KeyPair();
    const signer = new P256Signer(kp.privateKey);
    // toDerSignature never strips leading zeros. When r's top byte is 0x00 and the next byte is
    // below 0x80 (about 1 in 512 signatures) the result is not minimal DER; search for such an r.
    let found: { message: Uint8Array; raw: Uint8Array } | undefined;
    for (let i = 0; i < 20000 && !found; i++) {
      const message = utf8(`non-minimal ${i}`);
      const raw = signer.signRaw(message);
      if (raw[0] === 0 && raw[1] < 0x80) found = { message, raw };
    }
    expect(found).toBeDefined();
    const { message, raw } = found!;
    const der = toDerSignature(bytesToHex(raw));
    expect(der.slice(4, 10)).toBe('022000'); // a 32-byte INTEGER starting with 0x00: not minimal DER
    const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', ...xy(kp.publicKeyUncompressed) }, format: 'jwk' });
    expect(nodeVerify('sha256', message, key, Buffer.from(der, 'hex'))).toBe(false); // OpenSSL: strict DER
    expect(verifyP256Der(kp.publicKey, message, der)).toBe(true);
  });

  test('malformed signatures return false; an invalid key throws INVALID_PUBLIC_KEY', () => {
    const kp = generateP256KeyPair();
    const msg = utf8('m');
    expect(verifyP256Der(kp.publicKey, msg, 'not hex')).toBe(false);
    expect(verifyP256Der(kp.publicKey, msg, '3000')).toBe(false);
    expect(verifyP256Raw(kp.publicKey, msg, new Uint8Array(63))).toBe(false);
    expect(verifyP256Raw(kp.publicKey, msg, new Uint8Array(64))).toBe(false); // r = s = 0
    expect(verifyP256Raw(kp.publicKey, msg, Uint8Array.from([...bigTo32(P256_N), ...bigTo32(1n)]))).toBe(false);
    expect(codeOf(() => verifyP256Der('02' + 'ff'.repeat(32), msg, '3000'))).toBe('INVALID_PUBLIC_KEY');
  });

  test('the KeyObject cache never mixes keys up', () => {
    const keys = Array.from({ length: 5 }, () => generateP256KeyPair());
    const msg = utf8('cache');
    const sigs = keys.map((k) => signP256Der(k.privateKey, msg));
    for (let round = 0; round < 3; round++) {
      keys.forEach((k, i) => {
        sigs.forEach((sig, j) => {
          expect(verifyP256Der(round % 2 ? k.publicKeyUncompressed : k.publicKey, msg, sig)).toBe(i === j);
        });
      });
    }
  });
});

describe('sign', () => {
  test('P256Signer DER output is minimal, low-S, and verifies with the SDK and noble', async () => {
    const kp = sdkGenerateP256KeyPair();
    const signer = new P256Signer(kp.privateKey);
    expect(signer.publicKeyHex).toBe(kp.publicKey);
    expect(signer.publicKeyUncompressedHex).toBe(kp.publicKeyUncompressed);
    for (let i = 0; i < 50; i++) {
      const body = `{"n":${i}}`;
      const der = signer.signDer(utf8(body));
      expect(der).toMatch(/^30[0-9a-f]+$/);
      expect(bytesToHex(rawToDerSignature(parseDerSignature(der)))).toBe(der); // canonical
      const raw = parseDerSignature(der);
      expect(BigInt('0x' + bytesToHex(raw.subarray(32))) <= P256_N / 2n).toBe(true);
      expect(await verifyStampSignature(kp.publicKey, der, body)).toBe(true);
      expect(nobleP256.verify(raw, utf8(body), hexToBytes(kp.publicKey))).toBe(true); // noble v2 default lowS: true
      expect(nobleP256.verify(raw, sha256(utf8(body)), hexToBytes(kp.publicKey), { prehash: false })).toBe(true);
    }
  });

  test('signP256Der accepts hex or bytes keys and rejects invalid ones', () => {
    const kp = generateP256KeyPair();
    const msg = utf8('x');
    expect(verifyP256Der(kp.publicKey, msg, signP256Der(bytesToHex(kp.privateKey), msg))).toBe(true);
    expect(codeOf(() => signP256Der(new Uint8Array(32), msg))).toBe('INVALID_PRIVATE_KEY');
  });
});

function xy(uncompressed: Uint8Array) {
  return {
    x: Buffer.from(uncompressed.subarray(1, 33)).toString('base64url'),
    y: Buffer.from(uncompressed.subarray(33, 65)).toString('base64url'),
  };
}
