// QOS quorum-key envelopes (src/crypto/quorum-key.ts) against the sender in @turnkey/crypto
// (encryptOauth2ClientSecret / quorumKeyEncrypt, docs/reference/bundles.md "Other signed tokens"): what
// the SDK encrypts to a P256Signer's public key opens with that signer, whether the client named the key
// uncompressed or compressed; another key, a flipped bit or a wrong length field never opens.
import { describe, expect, it } from 'vitest';
import { encryptOauth2ClientSecret } from '@turnkey/crypto';
import { generateP256KeyPair, P256Signer, bytesToHex } from '../../../src/crypto/p256.js';
import { openQuorumKeyEnvelope } from '../../../src/crypto/quorum-key.js';

const signer = new P256Signer(generateP256KeyPair().privateKey);
const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');

describe('openQuorumKeyEnvelope', () => {
  it('opens what encryptOauth2ClientSecret encrypts to the signer key, in either encoding', async () => {
    const secret = 'client-secret-✓-' + 'x'.repeat(300);
    expect(text(openQuorumKeyEnvelope(await encryptOauth2ClientSecret(secret, signer.publicKeyUncompressedHex), signer))).toBe(secret);
    expect(text(openQuorumKeyEnvelope(await encryptOauth2ClientSecret(secret, signer.publicKeyHex), signer))).toBe(secret);
  });

  it('refuses envelopes for another key, tampered envelopes and malformed input', async () => {
    const other = new P256Signer(generateP256KeyPair().privateKey);
    const envelope = await encryptOauth2ClientSecret('s', other.publicKeyUncompressedHex);
    expect(() => openQuorumKeyEnvelope(envelope, signer)).toThrow(/does not open with this key/);
    // Turnkey's own key (no override): Sigil cannot and must not open it.
    const toTurnkey = await encryptOauth2ClientSecret('s');
    expect(() => openQuorumKeyEnvelope(toTurnkey, signer)).toThrow(/does not open with this key/);

    const mine = Buffer.from(await encryptOauth2ClientSecret('secret', signer.publicKeyUncompressedHex), 'hex');
    const flipped = Buffer.from(mine);
    flipped[flipped.length - 1] ^= 1;
    expect(() => openQuorumKeyEnvelope(bytesToHex(flipped), signer)).toThrow(/does not open/);
    const badLength = Buffer.from(mine);
    badLength.writeUInt32LE(badLength.readUInt32LE(77) + 1, 77);
    expect(() => openQuorumKeyEnvelope(bytesToHex(badLength), signer)).toThrow(/length field/);
    expect(() => openQuorumKeyEnvelope(bytesToHex(mine.subarray(0, 90)), signer)).toThrow(/too short|length field/);
    expect(() => openQuorumKeyEnvelope('nothex', signer)).toThrow(/not hex/);
  });
});
