// Sub-organizations (docs/reference/organizations.md; swagger v1CreateSubOrganizationIntentV8, and V3's
// privateKeys): created by a parent with its own root users, API keys, root quorum and optionally a
// wallet (or, V3, private keys), all in one
// transaction; the parent may read it but never write to it; only the sub-organization's own root
// users delete it, and only once its keys have been exported or deleteWithoutExport is set.
import { SigilError, invalid } from '../../errors/errors.js';
import type { OrganizationRow } from '../../store/index.js';
import type { ApiKeyParams } from '../identity/api-keys.js';
import type { AuthenticatorParams } from '../identity/authenticators.js';
import { checkName } from '../identity/contacts.js';
import type { OauthProviderParams } from '../identity/oauth-providers.js';
import { insertUserWithCredentials } from '../identity/users.js';
import type { ActivityContext } from '../context.js';
import { storeWallet, type WalletAccountParams } from '../keys/wallets.js';
import { createPrivateKeys, type PrivateKeyParams } from '../keys/private-keys.js';
import { reserve } from './quotas.js';
import { generateMnemonic, isMnemonicWordCount } from '../../crypto/bip39.js';
import type { ClientSignature } from '../identity/verification-tokens.js';
import { verifyContactAtSignup } from '../identity/verified-contacts.js';
import { destroyOrganizationKey } from '../keys/organization-keys.js';

export interface RootUserParams {
  userName: string;
  userEmail?: string;
  userPhoneNumber?: string;
  apiKeys: ApiKeyParams[];
  authenticators: AuthenticatorParams[];
  oauthProviders: OauthProviderParams[];
}

export interface CreateSubOrganizationParams {
  subOrganizationName: string;
  rootUsers: RootUserParams[];
  rootQuorumThreshold: number;
  wallet?: { walletName: string; accounts: WalletAccountParams[]; mnemonicLength?: number };
  /** V3 only: private keys made in the new sub-organization. */
  privateKeys?: PrivateKeyParams[];
  /** V7+: an OTP verification token proving a root user's email or phone (marks it verified). */
  verificationToken?: string;
  clientSignature?: ClientSignature;
}

export async function createSubOrganization(ctx: ActivityContext, p: CreateSubOrganizationParams) {
  if (ctx.organization.parent_organization_id) {
    throw new SigilError('INVALID_ACTIVITY_CALLER', 'This activity cannot be called by sub-organizations');
  }
  checkName(p.subOrganizationName, 'subOrganizationName');
  if (p.rootUsers.length === 0) throw invalid('rootUsers must list at least one user');
  if (!Number.isInteger(p.rootQuorumThreshold) || p.rootQuorumThreshold < 1 || p.rootQuorumThreshold > p.rootUsers.length) {
    throw invalid(`rootQuorumThreshold must be from 1 to the number of root users (${p.rootUsers.length})`);
  }
  const sub: OrganizationRow = {
    id: ctx.newId(),
    name: p.subOrganizationName,
    parent_organization_id: ctx.organization.id,
    root_quorum_threshold: p.rootQuorumThreshold,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await ctx.repos.organizations.insert(sub);
  // The new organization is empty; its root users still count against its limit of users.
  await reserve(ctx.repos, sub, 'users', p.rootUsers.length, { newOrganization: true });
  const rootUserIds: string[] = [];
  const created: { id: string; user_email: string | null; user_phone_number: string | null }[] = [];
  for (const [i, u] of p.rootUsers.entries()) {
    // The parent writes these contacts: a login through the parent may find them (migration 026).
    const userId = await insertUserWithCredentials(ctx, sub.id, u, `rootUsers[${i}]`, 'a root user', true);
    rootUserIds.push(userId);
    created.push({ id: userId, user_email: u.userEmail || null, user_phone_number: u.userPhoneNumber || null });
  }
  if (p.verificationToken) await verifyContactAtSignup(ctx, { verificationToken: p.verificationToken, clientSignature: p.clientSignature }, sub.id, created);
  await ctx.repos.organizations.setRootQuorum(sub.id, p.rootQuorumThreshold, rootUserIds, ctx.now);
  let wallet: { walletId: string; addresses: string[] } | undefined;
  if (p.wallet) {
    const words = p.wallet.mnemonicLength ?? 12;
    if (!isMnemonicWordCount(words)) throw invalid(`invalid mnemonic length ${words}: use 12, 15, 18, 21 or 24`);
    wallet = await storeWallet(
      { ...ctx, organization: sub },
      { walletName: p.wallet.walletName, accounts: p.wallet.accounts, mnemonic: generateMnemonic(words), imported: false, newOrganization: true },
    );
  }
  const privateKeys = p.privateKeys?.length ? (await createPrivateKeys({ ...ctx, organization: sub }, p.privateKeys)).privateKeys : undefined;
  return { subOrganizationId: sub.id, ...(wallet ? { wallet } : {}), ...(p.privateKeys ? { privateKeys: privateKeys ?? [] } : {}), rootUserIds };
}

export async function deleteSubOrganization(ctx: ActivityContext, deleteWithoutExport = false) {
  const org = ctx.organization;
  if (!org.parent_organization_id) throw invalid('delete_sub_organization must target a sub-organization, not a top-level organization');
  if (!deleteWithoutExport) {
    const wallets = (await ctx.repos.wallets.list(org.id)).filter((w) => w.exported !== 1);
    const keys = (await ctx.repos.privateKeys.list(org.id)).filter((k) => k.exported !== 1);
    if (wallets.length + keys.length > 0) {
      throw new SigilError(
        'WALLET_ACCOUNT_NOT_EXPORTED',
        `the sub-organization holds ${wallets.length} wallet(s) and ${keys.length} private key(s) never exported; export them or set deleteWithoutExport`,
      );
    }
  }
  await ctx.repos.organizations.deleteWithContents(org.id);
  // Crypto-shredding: whatever of the organization survives its rows (free pages, dead row versions,
  // copies) was sealed with this key, which leaves no copy behind (docs/operator-guide.md "Custody").
  await destroyOrganizationKey(ctx.services.barrier, ctx.repos, org.id);
  return { subOrganizationUuid: org.id };
}
