// Wallet operations (docs/reference/activities.md "The record"; docs/reference/keys.md): create_wallet,
// create_wallet_accounts, update_wallet, delete_wallets, delete_wallet_accounts, get_wallet,
// list_wallets, get_wallet_account, list_wallet_accounts.
import { pageLimit, requireCursors } from '../domain/records.js';
import {
  accountRecord,
  createWallet,
  prepareNewWallet,
  createWalletAccounts,
  deleteWalletAccounts,
  deleteWallets,
  findWalletAccount,
  renameWallet,
  requireWallet,
  walletRecord,
  type WalletAccountParams,
} from '../domain/keys/wallets.js';
import { invalid } from '../errors/errors.js';
import { walletDerivationFacts } from '../domain/keys/app-proofs.js';
import { defineActivity, defineQuery } from './define.js';

export const createWalletOp = defineActivity<
  { walletName: string; accounts: WalletAccountParams[]; mnemonicLength?: number },
  { walletId: string; addresses: string[] }
>({
  path: 'create_wallet',
  type: 'ACTIVITY_TYPE_CREATE_WALLET',
  result: 'createWalletResult',
  policy: { resource: 'WALLET', action: 'CREATE' },
  appProofFacts: (ctx, p, r) => walletDerivationFacts(ctx.organization.id, r.walletId, p.accounts, r.addresses),
  // The seed and derivations are made before any lock; the inserts join the grouped commit.
  prepare: (ctx, p) => prepareNewWallet(ctx, p),
  execute: (ctx, p) => createWallet(ctx, p),
});

export const createWalletAccountsOp = defineActivity<
  { walletId: string; accounts: WalletAccountParams[]; persist?: boolean },
  { addresses: string[] }
>({
  path: 'create_wallet_accounts',
  type: 'ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS',
  result: 'createWalletAccountsResult',
  policy: { resource: 'WALLET', action: 'CREATE' },
  appProofFacts: (ctx, p, r) => walletDerivationFacts(ctx.organization.id, p.walletId, p.accounts, r.addresses),
  execute: (ctx, p) => createWalletAccounts(ctx, p),
});

export const updateWalletOp = defineActivity<{ walletId: string; walletName?: string }, { walletId: string }>({
  path: 'update_wallet',
  type: 'ACTIVITY_TYPE_UPDATE_WALLET',
  result: 'updateWalletResult',
  policy: { resource: 'WALLET', action: 'UPDATE' },
  policyParams: (p) => ({ wallet_id: p.walletId }),
  execute: (ctx, p) => renameWallet(ctx, p.walletId, p.walletName),
});

export const deleteWalletsOp = defineActivity<{ walletIds: string[]; deleteWithoutExport?: boolean }, { walletIds: string[] }>({
  path: 'delete_wallets',
  type: 'ACTIVITY_TYPE_DELETE_WALLETS',
  result: 'deleteWalletsResult',
  policy: { resource: 'WALLET', action: 'DELETE' },
  execute: (ctx, p) => deleteWallets(ctx, p.walletIds, p.deleteWithoutExport),
});

export const deleteWalletAccountsOp = defineActivity<
  { walletAccountIds: string[]; deleteWithoutExport?: boolean },
  { walletAccountIds: string[] }
>({
  path: 'delete_wallet_accounts',
  type: 'ACTIVITY_TYPE_DELETE_WALLET_ACCOUNTS',
  result: 'deleteWalletAccountsResult',
  policy: { resource: 'WALLET', action: 'DELETE' },
  execute: (ctx, p) => deleteWalletAccounts(ctx, p.walletAccountIds, p.deleteWithoutExport),
});

export const getWalletOp = defineQuery<{ organizationId: string; walletId: string }, unknown>({
  path: 'get_wallet',
  request: 'v1GetWalletRequest',
  execute: async (ctx, b) => ({ wallet: walletRecord(await requireWallet(ctx.repos, ctx.organization.id, b.walletId)) }),
});

export const listWalletsOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'list_wallets',
  request: 'v1GetWalletsRequest',
  execute: async (ctx) => ({ wallets: (await ctx.repos.wallets.list(ctx.organization.id)).map(walletRecord) }),
});

export const getWalletAccountOp = defineQuery<{ organizationId: string; walletId: string; address?: string; path?: string }, unknown>({
  path: 'get_wallet_account',
  request: 'v1GetWalletAccountRequest',
  execute: async (ctx, b) => ({ account: accountRecord(await findWalletAccount(ctx.repos, ctx.organization.id, b.walletId, b)) }),
});

export const listWalletAccountsOp = defineQuery<
  {
    organizationId: string;
    walletId?: string;
    includeWalletDetails?: boolean;
    paginationOptions?: { limit?: string; before?: string; after?: string };
  },
  unknown
>({
  path: 'list_wallet_accounts',
  request: 'v1GetWalletAccountsRequest',
  execute: async (ctx, b) => {
    const orgId = ctx.organization.id;
    if (b.walletId) await requireWallet(ctx.repos, orgId, b.walletId);
    const page = b.paginationOptions ?? {};
    await requireCursors(page, (id) => ctx.repos.wallets.accountPosition(orgId, id), 'a wallet account');
    const rows = await ctx.repos.wallets.listAccounts(orgId, b.walletId || undefined, {
      limit: pageLimit(page.limit),
      before: page.before || undefined,
      after: page.after || undefined,
      order: 'asc',
    });
    const wallets = b.includeWalletDetails
      ? new Map((await ctx.repos.wallets.getMany(orgId, [...new Set(rows.map((r) => r.wallet_id))])).map((w) => [w.id, w]))
      : undefined;
    return { accounts: rows.map((r) => accountRecord(r, wallets?.get(r.wallet_id))) };
  },
});
