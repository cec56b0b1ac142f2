// Errors raised by the transaction parsers and signers in src/chains.
// One class for every chain so callers map it to an API error in one place: `code` says what kind of
// failure it is (docs/reference/keys.md "Signing": malformed input is INVALID_TRANSACTION, an unknown type is
// UNSUPPORTED_TRANSACTION_TYPE) and `message` is safe to show to the client (it never contains key
// material, only facts about the submitted bytes).

/** 'other' is for a transaction type that no codec handles. */
export type TxChain = 'ethereum' | 'solana' | 'tron' | 'bitcoin' | 'tempo' | 'other';

export type TxErrorCode =
  /** The bytes are not a well-formed transaction of the declared kind. */
  | 'INVALID_TRANSACTION'
  /** Well-formed, but a feature Sigil (like the reference service) refuses to sign. */
  | 'UNSUPPORTED_TRANSACTION'
  /** Well-formed, but none of the keys offered for signing has a place in it. */
  | 'NO_MATCHING_SIGNER'
  /** The signer callback returned something that is not a signature of the expected shape. */
  | 'SIGNER_FAILURE';

export class TransactionError extends Error {
  override readonly name = 'TransactionError';
  constructor(
    readonly chain: TxChain,
    readonly code: TxErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Shorthand used by the parsers: a malformed-input error for `chain`. */
export function invalid(chain: TxChain, message: string): TransactionError {
  return new TransactionError(chain, 'INVALID_TRANSACTION', message);
}
