// BIP341 key tweaking for taproot key-path spends: output key for an address, tweaked secret key
// for signing. Spec: docs/reference/addresses.md (BITCOIN_<NET>_P2TR = BIP86 key-path-only taproot, "tweak with
// no script tree"; P2TR signing = "BIP340 Schnorr with the BIP341 tweak") and BIP-0341
// taproot_tweak_pubkey / taproot_tweak_seckey. Point arithmetic runs in libsecp256k1 (native).

import { CryptoInputError } from './errors.js';
import { secp256k1Native } from './secp256k1-native.js';
import { concatBytes } from './bytes.js';
import { sha256 } from './hash.js';

const TAG_PREFIXES = new Map<string, Uint8Array>();

/** BIP340 tagged hash: sha256(sha256(tag) || sha256(tag) || msg). */
export function taggedHash(tag: string, ...messages: Uint8Array[]): Uint8Array {
  let prefix = TAG_PREFIXES.get(tag);
  if (!prefix) {
    const t = sha256(new TextEncoder().encode(tag));
    prefix = concatBytes(t, t);
    TAG_PREFIXES.set(tag, prefix);
  }
  return sha256(concatBytes(prefix, ...messages));
}

/** x-only (32-byte) form of a compressed or x-only secp256k1 public key. */
export function toXOnly(publicKey: Uint8Array): Uint8Array {
  if (publicKey.length === 32) return publicKey;
  if (publicKey.length === 33 && (publicKey[0] === 2 || publicKey[0] === 3)) return publicKey.slice(1);
  if (publicKey.length === 65 && publicKey[0] === 4) return secp256k1Native.publicKeyConvert(publicKey, true).slice(1);
  throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: expected a secp256k1 key (32, 33 or 65 bytes)');
}

function checkMerkleRoot(merkleRoot?: Uint8Array): Uint8Array {
  if (merkleRoot === undefined) return new Uint8Array(0);
  if (merkleRoot.length !== 32) throw new CryptoInputError('INVALID_PAYLOAD', 'invalid taproot merkle root: expected 32 bytes');
  return merkleRoot;
}

/** t = taggedHash("TapTweak", x(P) || merkleRoot); merkleRoot omitted for key-path-only (BIP86). */
export function tapTweakHash(internalPublicKey: Uint8Array, merkleRoot?: Uint8Array): Uint8Array {
  return taggedHash('TapTweak', toXOnly(internalPublicKey), checkMerkleRoot(merkleRoot));
}

/** BIP341 taproot_tweak_pubkey: output key Q = lift_x(x(P)) + t*G, as x-only key and y parity. */
export function taprootOutputKey(internalPublicKey: Uint8Array, merkleRoot?: Uint8Array): { outputKey: Uint8Array; parity: 0 | 1 } {
  const x = toXOnly(internalPublicKey);
  const t = tapTweakHash(x, merkleRoot);
  let q: Uint8Array;
  try {
    q = secp256k1Native.publicKeyTweakAdd(concatBytes(Uint8Array.of(2), x), t, true);
  } catch {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: not a valid taproot internal key');
  }
  return { outputKey: q.slice(1), parity: q[0] === 3 ? 1 : 0 };
}

/**
 * BIP341 taproot_tweak_seckey: negate d if P = d*G has odd y, then add t. The result signs for the
 * output key with BIP340 Schnorr. `tweak` may be given directly (t) instead of a merkle root.
 */
export function taprootTweakPrivateKey(privateKey: Uint8Array, opts: { merkleRoot?: Uint8Array; tweak?: Uint8Array } = {}): Uint8Array {
  if (!secp256k1Native.privateKeyVerify(privateKey)) {
    throw new CryptoInputError('INVALID_PRIVATE_KEY', 'invalid private key for CURVE_SECP256K1');
  }
  const p = secp256k1Native.publicKeyCreate(privateKey, true);
  const t = opts.tweak ?? tapTweakHash(p, opts.merkleRoot);
  if (t.length !== 32) throw new CryptoInputError('INVALID_PAYLOAD', 'invalid taproot tweak: expected 32 bytes');
  const d = new Uint8Array(privateKey);
  if (p[0] === 3) secp256k1Native.privateKeyNegate(d);
  try {
    return secp256k1Native.privateKeyTweakAdd(d, t);
  } catch {
    d.fill(0);
    throw new CryptoInputError('INVALID_PAYLOAD', 'invalid taproot tweak: out of range');
  }
}
