// Hex input of a transaction codec: the bytes helpers themselves live in src/crypto/bytes.ts; what
// is particular here is the error. Transactions arrive as hex with or without 0x, and output is
// lowercase without a prefix (docs/reference/keys.md); empty or malformed hex is the chain's
// INVALID_TRANSACTION, not a generic hex error.

import { fromHex, isHexBody } from '../crypto/bytes.js';
import { TransactionError, type TxChain } from './errors.js';

/** Decodes hex with or without a 0x prefix; odd length or a non-hex character is INVALID_TRANSACTION. */
export function hexToBytes(chain: TxChain, input: string): Uint8Array {
  if (typeof input !== 'string') throw new TransactionError(chain, 'INVALID_TRANSACTION', 'transaction must be a hex string');
  const h = input.startsWith('0x') || input.startsWith('0X') ? input.slice(2) : input;
  if (h.length === 0) throw new TransactionError(chain, 'INVALID_TRANSACTION', 'transaction is empty');
  if (!isHexBody(h)) throw new TransactionError(chain, 'INVALID_TRANSACTION', 'transaction is not valid hex');
  return fromHex(h);
}
