// Export and import operations (docs/reference/policies.md; docs/reference/bundles.md):
// export_wallet, export_wallet_account, export_private_key, init_import_wallet, import_wallet,
// init_import_private_key, import_private_key.
import type { MnemonicLanguage } from '../crypto/bip39.js';
import type { Curve } from '../crypto/curves.js';
import {
  exportPolicyKeywords,
  exportPrivateKey,
  exportWallet,
  exportWalletAccount,
  importPrivateKey,
  importWallet,
  initImport,
} from '../domain/keys/export-import.js';
import type { WalletAccountParams } from '../domain/keys/wallets.js';
import { defineActivity } from './define.js';
import { walletDerivationFacts } from '../domain/keys/app-proofs.js';

export const exportWalletOp = defineActivity<{ walletId: string; targetPublicKey: string; language?: MnemonicLanguage }, unknown>({
  path: 'export_wallet',
  type: 'ACTIVITY_TYPE_EXPORT_WALLET',
  result: 'exportWalletResult',
  policy: { resource: 'WALLET', action: 'EXPORT' },
  policyParams: (p) => ({ target_public_key: p.targetPublicKey }),
  policyContext: (ctx, p) => exportPolicyKeywords(ctx, { walletId: p.walletId }),
  execute: (ctx, p) => exportWallet(ctx, p),
});

export const exportWalletAccountOp = defineActivity<{ address: string; targetPublicKey: string }, unknown>({
  path: 'export_wallet_account',
  type: 'ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT',
  result: 'exportWalletAccountResult',
  policy: { resource: 'WALLET', action: 'EXPORT' },
  policyParams: (p) => ({ target_public_key: p.targetPublicKey }),
  policyContext: (ctx, p) => exportPolicyKeywords(ctx, { address: p.address }),
  execute: (ctx, p) => exportWalletAccount(ctx, p),
});

export const exportPrivateKeyOp = defineActivity<{ privateKeyId: string; targetPublicKey: string }, unknown>({
  path: 'export_private_key',
  type: 'ACTIVITY_TYPE_EXPORT_PRIVATE_KEY',
  result: 'exportPrivateKeyResult',
  policy: { resource: 'PRIVATE_KEY', action: 'EXPORT' },
  policyParams: (p) => ({ target_public_key: p.targetPublicKey }),
  policyContext: (ctx, p) => exportPolicyKeywords(ctx, { privateKeyId: p.privateKeyId }),
  execute: (ctx, p) => exportPrivateKey(ctx, p),
});

export const initImportWalletOp = defineActivity<{ userId: string }, unknown>({
  path: 'init_import_wallet',
  type: 'ACTIVITY_TYPE_INIT_IMPORT_WALLET',
  result: 'initImportWalletResult',
  policy: { resource: 'WALLET', action: 'IMPORT' },
  execute: (ctx, p) => initImport(ctx, 'wallet', p.userId),
});

export const importWalletOp = defineActivity<
  { userId: string; walletName: string; encryptedBundle: string; accounts: WalletAccountParams[] },
  { walletId: string; addresses: string[] }
>({
  path: 'import_wallet',
  type: 'ACTIVITY_TYPE_IMPORT_WALLET',
  result: 'importWalletResult',
  policy: { resource: 'WALLET', action: 'IMPORT' },
  appProofFacts: (ctx, p, r) => walletDerivationFacts(ctx.organization.id, r.walletId, p.accounts, r.addresses),
  secretFields: ['encryptedBundle'],
  execute: (ctx, p) => importWallet(ctx, p),
});

export const initImportPrivateKeyOp = defineActivity<{ userId: string }, unknown>({
  path: 'init_import_private_key',
  type: 'ACTIVITY_TYPE_INIT_IMPORT_PRIVATE_KEY',
  result: 'initImportPrivateKeyResult',
  policy: { resource: 'PRIVATE_KEY', action: 'IMPORT' },
  execute: (ctx, p) => initImport(ctx, 'private_key', p.userId),
});

export const importPrivateKeyOp = defineActivity<
  { userId: string; privateKeyName: string; encryptedBundle: string; curve: Curve; addressFormats: string[] },
  unknown
>({
  path: 'import_private_key',
  type: 'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
  result: 'importPrivateKeyResult',
  policy: { resource: 'PRIVATE_KEY', action: 'IMPORT' },
  secretFields: ['encryptedBundle'],
  execute: (ctx, p) => importPrivateKey(ctx, p),
});
