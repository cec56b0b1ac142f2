// Export and import of wallets and keys with Turnkey-compatible HPKE bundles (docs/reference/api.md
// docs/reference/keys.md; docs/reference/keys.md "Export, import, delete"). Secrets leave only sealed to the client's
// target key in a bundle signed by the deployment signer; imports arrive sealed to a single-use,
// expiring target key bound to one organization and user. Export sets the `exported` flags that
// the delete rules read.
import { translateMnemonic, validateMnemonic, type MnemonicLanguage } from '../../crypto/bip39.js';
import { makeExportBundle, makeImportBundle, openImportBundle } from '../../crypto/bundles.js';
import type { Curve } from '../../crypto/curves.js';
import { isValidPrivateKey } from '../../crypto/keys.js';
import { bytesToHex, generateP256KeyPair, isValidPublicKey } from '../../crypto/p256.js';
import { SigilError, invalid, notAuthorized, notFound } from '../../errors/errors.js';
import type { ActivityContext, OperationContext } from '../context.js';
import { reserve } from '../governance/quotas.js';
import type { PolicyContext } from '../../policy/index.js';
import { parseDerivationPath, HARDENED_OFFSET } from '../../crypto/hd-path.js';
import { ACCOUNT_KEY_AT, PRIVATE_KEY_AT, openMnemonic } from './key-material.js';
import { openForOrganization, openerFor, sealForOrganization } from './organization-keys.js';
import { requirePrivateKey, storePrivateKey } from './private-keys.js';
import { requireUser } from '../lookup.js';
import { requireWallet, storeWallet, type WalletAccountParams } from './wallets.js';

type ImportKind = 'wallet' | 'private_key' | 'secret';

export const IMPORT_TARGET_AT = (id: string) => ({ table: 'import_bundles', rowId: id, column: 'target_private_key' });

export function checkTarget(targetPublicKey: string): string {
  const hex = targetPublicKey.replace(/^0x/, '');
  if (!/^[0-9a-fA-F]+$/.test(hex) || !isValidPublicKey(hex)) {
    throw invalid('invalid targetPublicKey: it must be a P-256 public key in hex, compressed (33 bytes) or uncompressed (65 bytes)');
  }
  return hex;
}

/** An export bundle of `plaintext` sealed to the client's target key; `plaintext` is zeroed afterwards. */
export function exportBundle(ctx: ActivityContext, plaintext: Uint8Array, targetPublicKey: string): string {
  try {
    return makeExportBundle({
      plaintext,
      targetPublicKey: checkTarget(targetPublicKey),
      organizationId: ctx.organization.id,
      signerPrivateKey: ctx.services.signer,
    });
  } finally {
    plaintext.fill(0);
  }
}

export async function exportWallet(ctx: ActivityContext, p: { walletId: string; targetPublicKey: string; language?: MnemonicLanguage }) {
  const wallet = await requireWallet(ctx.repos, ctx.organization.id, p.walletId);
  let mnemonic = openMnemonic(await openerFor(ctx.services.barrier, ctx.repos, wallet.organization_id, [wallet.mnemonic]), wallet.id, wallet.mnemonic);
  if (p.language && p.language !== 'MNEMONIC_LANGUAGE_ENGLISH') {
    mnemonic = translateMnemonic(mnemonic, 'MNEMONIC_LANGUAGE_ENGLISH', p.language);
  }
  const bundle = exportBundle(ctx, new Uint8Array(Buffer.from(mnemonic, 'utf8')), p.targetPublicKey);
  await ctx.repos.wallets.update(ctx.organization.id, wallet.id, { exported: 1 }, ctx.now);
  return { walletId: wallet.id, exportBundle: bundle };
}

export async function exportWalletAccount(ctx: ActivityContext, p: { address: string; targetPublicKey: string }) {
  const [account] = await ctx.repos.wallets.accountsByAddress(ctx.organization.id, p.address);
  if (!account) throw notFound(`wallet account not found: no account of this organization has address ${p.address}`);
  const key = (await openerFor(ctx.services.barrier, ctx.repos, account.organization_id, [account.private_key])).open(account.private_key, ACCOUNT_KEY_AT(account.id));
  const bundle = exportBundle(ctx, new Uint8Array(key), p.targetPublicKey);
  await ctx.repos.wallets.markAccountExported(ctx.organization.id, account.id, ctx.now);
  return { address: account.address, exportBundle: bundle };
}

export async function exportPrivateKey(ctx: ActivityContext, p: { privateKeyId: string; targetPublicKey: string }) {
  const row = await requirePrivateKey(ctx.repos, ctx.organization.id, p.privateKeyId);
  const key = (await openerFor(ctx.services.barrier, ctx.repos, row.organization_id, [row.private_key])).open(row.private_key, PRIVATE_KEY_AT(row.id));
  const bundle = exportBundle(ctx, new Uint8Array(key), p.targetPublicKey);
  await ctx.repos.privateKeys.markExported(ctx.organization.id, row.id, ctx.now);
  return { privateKeyId: row.id, exportBundle: bundle };
}

/** Imports target the caller's own user (docs/reference/keys.md "Export, import, delete"). */
async function requireSelf(ctx: ActivityContext, userId: string) {
  await requireUser(ctx.repos, ctx.organization.id, userId);
  if (ctx.caller.user.id !== userId) {
    throw notAuthorized(`request not authorized: imports must target your own user; ${userId} is not the caller`);
  }
}

export async function initImport(ctx: ActivityContext, kind: ImportKind, userId: string) {
  await requireSelf(ctx, userId);
  return { importBundle: await issueImportTarget(ctx, kind, userId) };
}

/**
 * A fresh single-use, expiring import target for `userId`: its private half sealed at rest, and the
 * signed bundle ({targetPublic, organizationId, userId}) the client verifies before sealing to it.
 */
export async function issueImportTarget(ctx: ActivityContext, kind: ImportKind, userId: string): Promise<string> {
  const target = generateP256KeyPair();
  const id = ctx.newId();
  const importBundle = makeImportBundle({
    organizationId: ctx.organization.id,
    userId,
    targetPublicKey: target.publicKeyUncompressed,
    signerPrivateKey: ctx.services.signer,
  });
  await ctx.repos.importBundles.insert({
    id,
    organization_id: ctx.organization.id,
    user_id: userId,
    kind,
    target_private_key: await sealForOrganization(ctx.services.barrier, ctx.repos, ctx.organization.id, ctx.now, target.privateKey, IMPORT_TARGET_AT(id)),
    target_public_key: bytesToHex(target.publicKeyUncompressed),
    import_bundle: importBundle,
    expires_at: ctx.now + ctx.services.settings.importBundleTtlMs,
    used_at: null,
    created_at: ctx.now,
  });
  target.privateKey.fill(0);
  return importBundle;
}

/**
 * Opens an encrypted bundle with the user's import target it was sealed to, consuming that target.
 * The user's recent targets are tried newest first, so a reused or expired one is reported as such.
 */
async function openImport(ctx: ActivityContext, kind: ImportKind, userId: string, encryptedBundle: string): Promise<Uint8Array> {
  const candidates = await ctx.repos.importBundles.recent(ctx.organization.id, userId, kind, 10);
  for (const c of candidates) {
    const targetPrivateKey = await openForOrganization(ctx.services.barrier, ctx.repos, c.organization_id, c.target_private_key, IMPORT_TARGET_AT(c.id));
    let plaintext: Uint8Array;
    try {
      plaintext = openImportBundle({
        encryptedBundle,
        importBundle: c.import_bundle,
        targetPrivateKey,
        organizationId: ctx.organization.id,
        userId,
        signerPublicKey: ctx.services.signer.publicKeyUncompressedHex,
      });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'MALFORMED_BUNDLE') throw err; // the encrypted bundle itself is not a bundle
      continue; // sealed to another target
    } finally {
      targetPrivateKey.fill(0);
    }
    if (c.used_at !== null) throw invalid(`import bundle already used: call init_import_${kind} again for a fresh one`);
    if (c.expires_at <= ctx.now) {
      plaintext.fill(0);
      throw invalid(`import bundle expired: call init_import_${kind} again for a fresh one`);
    }
    if (!(await ctx.repos.importBundles.markUsed(c.id, ctx.now))) {
      plaintext.fill(0);
      throw invalid(`import bundle already used: call init_import_${kind} again for a fresh one`);
    }
    return plaintext;
  }
  throw invalid(
    `encrypted bundle does not open with any import bundle issued to user ${userId} in this organization (tampered, or sealed for another organization or user)`,
  );
}

export async function importWallet(
  ctx: ActivityContext,
  p: { userId: string; walletName: string; encryptedBundle: string; accounts: WalletAccountParams[] },
) {
  await requireSelf(ctx, p.userId);
  const plaintext = await openImport(ctx, 'wallet', p.userId, p.encryptedBundle);
  const text = Buffer.from(plaintext).toString('utf8');
  plaintext.fill(0);
  const mnemonic = validateMnemonic(text); // "invalid mnemonic: …", which @turnkey/core matches
  return storeWallet(ctx, { walletName: p.walletName, accounts: p.accounts, mnemonic, imported: true });
}

export async function importPrivateKey(
  ctx: ActivityContext,
  p: { userId: string; privateKeyName: string; encryptedBundle: string; curve: Curve; addressFormats: string[] },
) {
  await requireSelf(ctx, p.userId);
  const plaintext = await openImport(ctx, 'private_key', p.userId, p.encryptedBundle);
  try {
    if (!isValidPrivateKey(p.curve, plaintext)) {
      throw new SigilError('REQUEST_INVALID', `invalid private key: the imported key is not a 32-byte ${p.curve} private key`);
    }
    // storePrivateKey leaves the count to its callers, so create_private_keys counts a batch once.
    await reserve(ctx.repos, ctx.organization, 'privateKeys', 1);
    return await storePrivateKey(ctx, { privateKeyName: p.privateKeyName, curve: p.curve, privateKeyTags: [], addressFormats: p.addressFormats }, plaintext, {
      imported: true,
      field: 'parameters',
    });
  } finally {
    plaintext.fill(0);
  }
}

/**
 * What export policies see (docs/reference/policies.md "Keywords"): the target wallet, private key, or wallet
 * account; for EXPORT_WALLET_ACCOUNT the account's path, curve and format too.
 */
export async function exportPolicyKeywords(
  ctx: OperationContext,
  target: { walletId?: string; address?: string; privateKeyId?: string },
): Promise<PolicyContext> {
  const orgId = ctx.organization.id;
  const walletKeyword = (w: { id: string; imported: number; exported: number; name: string }) => ({
    id: w.id,
    imported: w.imported === 1,
    exported: w.exported === 1,
    label: w.name,
  });
  if (target.walletId) {
    const w = await ctx.repos.wallets.get(orgId, target.walletId);
    return w ? { wallet: walletKeyword(w) } : {};
  }
  if (target.address) {
    const [a] = await ctx.repos.wallets.accountsByAddress(orgId, target.address);
    if (!a) return {};
    const w = await ctx.repos.wallets.get(orgId, a.wallet_id);
    const indexes = parseDerivationPath(a.path);
    return {
      wallet_account: {
        address: a.address,
        path: a.path,
        path_indexes: indexes.map((i) => (i >= HARDENED_OFFSET ? i - HARDENED_OFFSET : i)),
        path_hardened: indexes.map((i) => i >= HARDENED_OFFSET),
        wallet_id: a.wallet_id,
        curve: a.curve,
        address_format: a.address_format,
      },
      ...(w ? { wallet: walletKeyword(w) } : {}),
    };
  }
  if (target.privateKeyId) {
    const k = await ctx.repos.privateKeys.get(orgId, target.privateKeyId);
    if (!k) return {};
    const tags = await ctx.repos.privateKeys.tagIdsOf([k.id]);
    return { private_key: { id: k.id, tags: tags.get(k.id) ?? [], imported: k.imported === 1, exported: k.exported === 1, label: k.name } };
  }
  return {};
}
