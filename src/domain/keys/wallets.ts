// HD wallets and their accounts (docs/reference/keys.md "Wallets", docs/reference/keys.md;
// docs/reference/addresses.md): creation from a fresh or given mnemonic, accounts derived once at creation with
// their keys sealed per row (signing never re-derives), records, updates and deletion rules.
import { generateMnemonic, isMnemonicWordCount, mnemonicToSeedAsync, type MnemonicWordCount } from '../../crypto/bip39.js';
import { assertCurveFitsAddressFormat, encodeAddress } from '../../chains/addresses/index.js';
import type { Curve } from '../../crypto/curves.js';
import { canonicalDerivationPath } from '../../crypto/hd-path.js';
import { deriveKey } from '../../crypto/hd.js';
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import { NameTaken, type Repositories, type WalletAccountRow, type WalletRow } from '../../store/index.js';
import { checkName } from '../identity/contacts.js';
import { requireAll } from '../lookup.js';
import type { ActivityContext, OperationContext, Prepared } from '../context.js';
import { reserve } from '../governance/quotas.js';
import { ACCOUNT_KEY_AT, openMnemonic, sealMnemonic } from './key-material.js';
import { openerFor, sealerFor } from './organization-keys.js';
import type { SecretSealer } from '../../barrier/barrier.js';
import { timestamp, type TimestampObject } from '../records.js';

export interface WalletAccountParams {
  curve: Curve;
  pathFormat: 'PATH_FORMAT_BIP32';
  path: string;
  addressFormat: string;
  name?: string;
}

export interface WalletRecord {
  walletId: string;
  walletName: string;
  createdAt: TimestampObject;
  updatedAt: TimestampObject;
  exported: boolean;
  imported: boolean;
}

export function walletRecord(row: WalletRow): WalletRecord {
  return {
    walletId: row.id,
    walletName: row.name,
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
    exported: row.exported === 1,
    imported: row.imported === 1,
  };
}

export function accountRecord(row: WalletAccountRow, wallet?: WalletRow) {
  return {
    walletAccountId: row.id,
    organizationId: row.organization_id,
    walletId: row.wallet_id,
    curve: row.curve,
    pathFormat: row.path_format,
    path: row.path,
    addressFormat: row.address_format,
    address: row.address,
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
    publicKey: row.public_key,
    ...(row.name !== null ? { name: row.name } : {}),
    ...(wallet ? { walletDetails: walletRecord(wallet) } : {}),
  };
}

export async function requireWallet(repos: Repositories, organizationId: string, walletId: string): Promise<WalletRow> {
  const w = await repos.wallets.get(organizationId, walletId);
  if (!w) throw notFound(`wallet not found: ${walletId}`);
  return w;
}

async function requireUniqueWalletName(repos: Repositories, organizationId: string, name: string, exceptId?: string) {
  const clash = await repos.wallets.findByName(organizationId, name);
  if (clash && clash.id !== exceptId) {
    throw new SigilError('CONFLICT', `a wallet named ${JSON.stringify(name)} already exists in this organization`);
  }
}

/**
 * Derives accounts from `seed` for a wallet, checking every rule before anything is written:
 * curve fits format, path syntax, no path used twice in the wallet, names unique in the organization.
 */
async function deriveAccounts(
  ctx: OperationContext,
  walletId: string,
  seed: Uint8Array,
  accounts: WalletAccountParams[],
  /** newOrganization: the organization is being created with the wallet, so no name can be taken. */
  opts: { newWallet: boolean; newOrganization?: boolean; sealer: SecretSealer },
): Promise<WalletAccountRow[]> {
  const orgId = ctx.organization.id;
  const { sealer } = opts;
  const pathKeys = new Map<string, number>();
  const names = new Map<string, number>();
  const prepared = accounts.map((a, i) => {
    const field = `accounts[${i}]`;
    assertCurveFitsAddressFormat(a.addressFormat, a.curve);
    const pathKey = canonicalDerivationPath(a.curve, a.path);
    const earlier = pathKeys.get(pathKey);
    if (earlier !== undefined) throw invalid(`invalid path: ${field}.path ${a.path} repeats accounts[${earlier}].path`);
    pathKeys.set(pathKey, i);
    if (a.name !== undefined && a.name !== '') {
      checkName(a.name, `${field}.name`);
      if (names.has(a.name)) throw invalid(`${field}.name ${JSON.stringify(a.name)} repeats accounts[${names.get(a.name)}].name`);
      names.set(a.name, i);
    }
    return { ...a, pathKey };
  });
  // A wallet being created has no accounts yet; only an existing one can clash on a path.
  const reused = opts.newWallet ? [] : await ctx.repos.wallets.accountByPathKey(walletId, [...pathKeys.keys()]);
  if (reused.length > 0) throw invalid(`invalid path: ${reused[0].path} is already used by an account of this wallet`);
  const taken = opts.newOrganization ? [] : await ctx.repos.wallets.accountsByName(orgId, [...names.keys()]);
  if (taken.length > 0) {
    throw new SigilError('CONFLICT', `a wallet account named ${JSON.stringify(taken[0].name)} already exists in this organization`);
  }
  const rows: WalletAccountRow[] = [];
  for (const [i, a] of prepared.entries()) {
    // Derivation is CPU work: let other requests run between every few accounts.
    if (i > 0 && i % DERIVATIONS_PER_TURN === 0) await new Promise((r) => setImmediate(r));
    const key = deriveKey(seed, a.curve, a.path);
    const id = ctx.newId();
    const row: WalletAccountRow = {
      id,
      organization_id: orgId,
      wallet_id: walletId,
      curve: a.curve,
      path_format: a.pathFormat,
      path: a.path,
      path_key: a.pathKey,
      address_format: a.addressFormat,
      address: encodeAddress(a.addressFormat, a.curve, key.publicKey),
      public_key: Buffer.from(key.publicKey).toString('hex'),
      private_key: sealer.seal(key.privateKey, ACCOUNT_KEY_AT(id)),
      exported: 0,
      name: a.name ? a.name : null,
      created_at: ctx.now,
      updated_at: ctx.now,
    };
    key.privateKey.fill(0);
    rows.push(row);
  }
  return rows;
}

/** Accounts derived in one turn of the event loop (each ~0.1 ms), so none blocks it for long. */
const DERIVATIONS_PER_TURN = 16;

function mnemonicWordCount(n: number | undefined): MnemonicWordCount {
  const count = n ?? 12;
  if (!isMnemonicWordCount(count)) throw invalid(`invalid mnemonic length ${count}: use 12, 15, 18, 21 or 24`);
  return count;
}

/**
 * A wallet for `mnemonic` with its accounts, made ready to store (create_wallet, import_wallet): the
 * checks that need no lock, the seed (PBKDF2 off the event loop), the derivations and the sealing
 * happen here, outside any transaction; `writes` then checks what only the transaction can (the
 * name still free, the quota's counter) and inserts.
 */
export async function prepareWallet(
  ctx: ActivityContext,
  p: { walletName: string; accounts: WalletAccountParams[]; mnemonic: string; imported: boolean },
  /**
   * The organization is being created in the same commit (create_sub_organization): it holds nothing
   * to read or count (see reserve), and its data key is the one `sealer` holds.
   */
  newOrganization?: { sealer: SecretSealer },
): Promise<Prepared<{ walletId: string; addresses: string[] }>> {
  const orgId = ctx.organization.id;
  checkName(p.walletName, 'walletName');
  const walletId = ctx.newId();
  const sealer = newOrganization?.sealer ?? (await sealerFor(ctx.services.barrier, ctx.repos, orgId, ctx.now));
  const seed = await mnemonicToSeedAsync(p.mnemonic);
  let rows: WalletAccountRow[];
  try {
    rows = await deriveAccounts(ctx, walletId, seed, p.accounts, { newWallet: true, newOrganization: newOrganization !== undefined, sealer });
  } finally {
    seed.fill(0);
  }
  const wallet: WalletRow = {
    id: walletId,
    organization_id: orgId,
    name: p.walletName,
    mnemonic: sealMnemonic(sealer, walletId, p.mnemonic),
    exported: 0,
    imported: p.imported ? 1 : 0,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  return {
    result: { walletId, addresses: rows.map((r) => r.address) },
    // The unique constraints decide a name clash, so nothing is read before writing.
    writes: async (repos) => {
      await reserve(repos, ctx.organization, 'wallets', 1, { newOrganization: newOrganization !== undefined });
      try {
        await repos.wallets.insertWithAccounts(wallet, rows);
      } catch (err) {
        if (!(err instanceof NameTaken)) throw err;
        throw new SigilError(
          'CONFLICT',
          err.what === 'wallet'
            ? `a wallet named ${JSON.stringify(p.walletName)} already exists in this organization`
            : 'a wallet account with one of these names already exists in this organization',
        );
      }
    },
  };
}

/** Stores a wallet for `mnemonic` with its accounts in the caller's transaction (import_wallet, approvals). */
export async function storeWallet(
  ctx: ActivityContext,
  p: { walletName: string; accounts: WalletAccountParams[]; mnemonic: string; imported: boolean },
): Promise<{ walletId: string; addresses: string[] }> {
  const prepared = await prepareWallet(ctx, p);
  await prepared.writes(ctx.repos);
  return prepared.result;
}

/** create_wallet, prepared (see prepareWallet). */
export function prepareNewWallet(
  ctx: ActivityContext,
  p: { walletName: string; accounts: WalletAccountParams[]; mnemonicLength?: number },
  newOrganization?: { sealer: SecretSealer },
) {
  const mnemonic = generateMnemonic(mnemonicWordCount(p.mnemonicLength));
  return prepareWallet(ctx, { walletName: p.walletName, accounts: p.accounts, mnemonic, imported: false }, newOrganization);
}

export async function createWallet(
  ctx: ActivityContext,
  p: { walletName: string; accounts: WalletAccountParams[]; mnemonicLength?: number },
) {
  const prepared = await prepareNewWallet(ctx, p);
  await prepared.writes(ctx.repos);
  return prepared.result;
}

/** Derives more accounts; with persist false only previews their addresses (docs/reference/keys.md). */
export async function createWalletAccounts(
  ctx: ActivityContext,
  p: { walletId: string; accounts: WalletAccountParams[]; persist?: boolean },
) {
  if (p.accounts.length === 0) throw invalid('accounts must list at least one account');
  const wallet = await requireWallet(ctx.repos, ctx.organization.id, p.walletId);
  const mnemonic = openMnemonic(await openerFor(ctx.services.barrier, ctx.repos, wallet.organization_id, [wallet.mnemonic]), wallet.id, wallet.mnemonic);
  const seed = await mnemonicToSeedAsync(mnemonic);
  const sealer = await sealerFor(ctx.services.barrier, ctx.repos, ctx.organization.id, ctx.now);
  const rows = await deriveAccounts(ctx, wallet.id, seed, p.accounts, { newWallet: false, sealer });
  seed.fill(0);
  if (p.persist !== false) await ctx.repos.wallets.insertAccounts(rows);
  return { addresses: rows.map((r) => r.address) };
}

export async function renameWallet(ctx: ActivityContext, walletId: string, walletName: string | undefined) {
  const orgId = ctx.organization.id;
  const wallet = await requireWallet(ctx.repos, orgId, walletId);
  if (walletName !== undefined && walletName !== wallet.name) {
    checkName(walletName, 'walletName');
    await requireUniqueWalletName(ctx.repos, orgId, walletName, wallet.id);
    await ctx.repos.wallets.update(orgId, wallet.id, { name: walletName }, ctx.now);
  }
  return { walletId: wallet.id };
}

function notExported(what: string, ids: string[]) {
  return new SigilError(
    'WALLET_ACCOUNT_NOT_EXPORTED',
    `${what} ${ids.join(', ')} ${ids.length === 1 ? 'has' : 'have'} not been exported; export first or set deleteWithoutExport to delete without a backup`,
  );
}

/** delete_wallets (docs/reference/keys.md "Export, import, delete"): never-exported wallets need deleteWithoutExport. */
export async function deleteWallets(ctx: ActivityContext, walletIds: string[], deleteWithoutExport = false) {
  if (walletIds.length === 0) throw invalid('walletIds must list at least one wallet');
  const orgId = ctx.organization.id;
  const { ids: unique, rows: wallets } = await requireAll(walletIds, (ids) => ctx.repos.wallets.getMany(orgId, ids), 'wallet not found');
  const unexported = wallets.filter((w) => w.exported !== 1).map((w) => w.id);
  if (unexported.length > 0 && !deleteWithoutExport) throw notExported('wallet', unexported);
  await ctx.repos.wallets.delete(orgId, unique);
  return { walletIds: unique };
}

export async function deleteWalletAccounts(ctx: ActivityContext, accountIds: string[], deleteWithoutExport = false) {
  if (accountIds.length === 0) throw invalid('walletAccountIds must list at least one account');
  const orgId = ctx.organization.id;
  const { ids: unique, rows: accounts } = await requireAll(
    accountIds,
    (ids) => ctx.repos.wallets.accountsById(orgId, ids),
    'wallet account not part of your organization',
  );
  const walletExported = new Map(
    (await ctx.repos.wallets.getMany(orgId, [...new Set(accounts.map((a) => a.wallet_id))])).map((w) => [w.id, w.exported === 1]),
  );
  const unexported = accounts.filter((a) => a.exported !== 1 && !walletExported.get(a.wallet_id)).map((a) => a.id);
  if (unexported.length > 0 && !deleteWithoutExport) throw notExported('wallet account', unexported);
  await ctx.repos.wallets.deleteAccounts(orgId, unique);
  return { walletAccountIds: unique };
}

/** get_wallet_account by address or by path (docs/reference/api.md "Queries"). */
export async function findWalletAccount(repos: Repositories, organizationId: string, walletId: string, by: { address?: string; path?: string }) {
  await requireWallet(repos, organizationId, walletId);
  if (by.address) {
    const found = (await repos.wallets.accountsByAddress(organizationId, by.address)).find((a) => a.wallet_id === walletId);
    if (!found) throw notFound(`wallet account not found: no account of wallet ${walletId} has address ${by.address}`);
    return found;
  }
  if (by.path) {
    const candidates = new Set<string>();
    for (const curve of ['CURVE_SECP256K1', 'CURVE_ED25519'] as const) candidates.add(canonicalDerivationPath(curve, by.path));
    const rows = await repos.wallets.accountByPathKey(walletId, [...candidates]);
    const found = rows.find((r) => r.path_key === canonicalDerivationPath(r.curve as Curve, by.path!));
    if (!found) throw notFound(`wallet account not found: wallet ${walletId} has no account at path ${by.path}`);
    return found;
  }
  throw invalid('bad request body: give the account address or its path');
}
