// Where each secret lives in the barrier (docs/design.md "Security model"): mnemonics and private keys
// are sealed with additional data naming their table, row and column, so a ciphertext copied to
// another row never opens. Plaintext exists only for the duration of one operation.
import type { SecretSealer } from '../../barrier/barrier.js';

export const MNEMONIC_AT = (walletId: string) => ({ table: 'wallets', rowId: walletId, column: 'mnemonic' });
export const ACCOUNT_KEY_AT = (accountId: string) => ({ table: 'wallet_accounts', rowId: accountId, column: 'private_key' });
export const PRIVATE_KEY_AT = (privateKeyId: string) => ({ table: 'private_keys', rowId: privateKeyId, column: 'private_key' });

export function sealMnemonic(barrier: SecretSealer, walletId: string, mnemonic: string): string {
  return barrier.seal(Buffer.from(mnemonic, 'utf8'), MNEMONIC_AT(walletId));
}

export function openMnemonic(barrier: SecretSealer, walletId: string, sealed: string): string {
  return barrier.open(sealed, MNEMONIC_AT(walletId)).toString('utf8');
}
