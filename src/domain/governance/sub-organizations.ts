// Sub-organizations (docs/reference/organizations.md; swagger v1CreateSubOrganizationIntentV8, and V3's
// privateKeys): created by a parent with its own root users, API keys, root quorum and optionally a
// wallet (or, V3, private keys), all in one commit, prepared before it and written in a grouped one
// (docs/design.md "Signups in shared commits"); the parent may read it but never write to it; only the
// sub-organization's own root users delete it, and only once its keys have been exported or
// deleteWithoutExport is set.
import { SigilError, invalid } from '../../errors/errors.js';
import type { OrganizationRow } from '../../store/index.js';
import { apiKeyExists, type ApiKeyParams } from '../identity/api-keys.js';
import { authenticatorExists, type AuthenticatorParams } from '../identity/authenticators.js';
import { checkName } from '../identity/contacts.js';
import { oauthProviderExists, sameIdentity, type OauthProviderParams } from '../identity/oauth-providers.js';
import { newUserRows, type NewUserRows } from '../identity/users.js';
import type { ActivityContext, Prepared } from '../context.js';
import { prepareNewWallet, type WalletAccountParams } from '../keys/wallets.js';
import { prepareNewOrganizationPrivateKeys, type PrivateKeyParams } from '../keys/private-keys.js';
import { reserve } from './quotas.js';
import type { ClientSignature } from '../identity/verification-tokens.js';
import { proveContactAtSignup } from '../identity/verified-contacts.js';
import { destroyOrganizationKey, newOrganizationSealer } from '../keys/organization-keys.js';

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

export interface CreateSubOrganizationResult {
  subOrganizationId: string;
  wallet?: { walletId: string; addresses: string[] };
  privateKeys?: { privateKeyId: string; addresses: { format: string; address: string }[] }[];
  rootUserIds: string[];
}

/**
 * create_sub_organization made ready to store (docs/design.md "Signups in shared commits"): every
 * check, the passkey attestations, the verification token, the wallet's seed, derivations and sealing
 * happen here, before any transaction, reading only what already exists (the token). The new organization is
 * invisible to everyone until it commits, so nothing of it needs reading or locking: `writes` only
 * inserts, and joins the grouped commit that records the activity, shared with concurrent signups.
 */
export async function prepareSubOrganization(ctx: ActivityContext, p: CreateSubOrganizationParams): Promise<Prepared<CreateSubOrganizationResult>> {
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
  // The new organization is empty; its root users still count against its limit of users.
  await reserve(ctx.repos, sub, 'users', p.rootUsers.length, { newOrganization: true });
  const users: NewUserRows[] = [];
  for (const [i, u] of p.rootUsers.entries()) {
    // The parent writes these contacts: a login through the parent may find them (migration 026).
    users.push(await newUserRows(ctx, sub.id, u, `rootUsers[${i}]`, 'a root user', true));
  }
  checkNoSharedCredentials(users);
  const spendToken = p.verificationToken
    ? await proveContactAtSignup(ctx, { verificationToken: p.verificationToken, clientSignature: p.clientSignature }, users.map((u) => u.user))
    : undefined;
  const key = newOrganizationSealer(ctx.services.barrier, sub.id, ctx.now);
  const inSub = { ...ctx, organization: sub };
  const wallet = p.wallet ? await prepareNewWallet(inSub, p.wallet, { sealer: key.sealer }) : undefined;
  const privateKeys = p.privateKeys?.length ? prepareNewOrganizationPrivateKeys(inSub, p.privateKeys, key.sealer) : undefined;
  const rootUserIds = users.map((u) => u.user.id);
  return {
    result: {
      subOrganizationId: sub.id,
      ...(wallet ? { wallet: wallet.result } : {}),
      ...(p.privateKeys ? { privateKeys: privateKeys?.result.privateKeys ?? [] } : {}),
      rootUserIds,
    },
    writes: async (repos) => {
      await spendToken?.(repos);
      await repos.organizations.insertWithContents({
        organization: sub,
        users: users.map((u) => u.user),
        apiKeys: users.flatMap((u) => u.apiKeys),
        authenticators: users.flatMap((u) => u.authenticators),
        oauthProviders: users.flatMap((u) => u.oauthProviders),
        rootQuorum: rootUserIds,
        key: key.row,
      });
      await wallet?.writes(repos);
      await privateKeys?.writes(repos);
    },
  };
}

/**
 * Root users of one new organization may not share a credential (an API key's public key, a passkey's
 * credential id, an OAuth identity are each unique in an organization); the answer is the one a
 * second registration in an existing organization gets.
 */
function checkNoSharedCredentials(users: NewUserRows[]): void {
  const keys = new Set<string>();
  const passkeys = new Set<string>();
  const identities: NewUserRows['oauthProviders'] = [];
  for (const u of users) {
    for (const k of u.apiKeys) {
      if (keys.has(k.public_key)) throw apiKeyExists(k.public_key);
      keys.add(k.public_key);
    }
    for (const a of u.authenticators) {
      if (passkeys.has(a.credential_id)) throw authenticatorExists(a.credential_id);
      passkeys.add(a.credential_id);
    }
    for (const o of u.oauthProviders) {
      if (identities.some((i) => sameIdentity(i, o))) throw oauthProviderExists(o);
      identities.push(o);
    }
  }
}

/** create_sub_organization in the caller's transaction (an approval that completes it). */
export async function createSubOrganization(ctx: ActivityContext, p: CreateSubOrganizationParams): Promise<CreateSubOrganizationResult> {
  const prepared = await prepareSubOrganization(ctx, p);
  await prepared.writes(ctx.repos);
  return prepared.result;
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
