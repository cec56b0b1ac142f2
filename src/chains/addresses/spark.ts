// ADDRESS_FORMAT_SPARK_MAINNET / _REGTEST: Spark identity address,
// bech32m(HRP "spark" / "sparkrt", 0x0a 0x21 || 33-byte compressed identity public key).
// Spec: docs/reference/addresses.md encodings table (SPARK rows). The two prefix bytes are the protobuf header
// of the SparkAddress message (field 1 `identity_public_key`, wire type 2, length 33).

import { bech32m } from '@scure/base';
import { CryptoInputError } from '../../crypto/errors.js';
import { concatBytes } from '../../crypto/bytes.js';

export const SPARK_HRP = { mainnet: 'spark', regtest: 'sparkrt' } as const;
const PROTO_HEADER = Uint8Array.of(0x0a, 0x21);

export function sparkAddress(network: keyof typeof SPARK_HRP, compressedPublicKey: Uint8Array): string {
  if (compressedPublicKey.length !== 33) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: Spark addresses need the 33-byte compressed key');
  }
  // 35 bytes -> 56 data words; with HRP and checksum the string stays under bech32's 90-char limit.
  return bech32m.encode(SPARK_HRP[network], bech32m.toWords(concatBytes(PROTO_HEADER, compressedPublicKey)));
}
