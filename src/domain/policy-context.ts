// What a policy sees (turnkey-semantics.md §1.3): the `activity` keyword of any activity, the
// consensus keywords `approvers` and `credentials` built from the votes cast so far, and the
// resource keywords (`wallet`, `wallet_account`, `private_key`, `eth.*`, `solana.tx`, `tron.tx`,
// `bitcoin.tx`) of the signing and export activities that target them.
import type { Activity, Credential, PolicyContext, User } from '../policy/index.js';
import type { Repositories, VoteRow } from '../store/index.js';
import type { SigningTarget } from './signing.js';
import { WEBAUTHN_CREDENTIAL_TYPE } from './authenticators.js';

/** Version-agnostic kind: the type without `ACTIVITY_TYPE_` and a trailing `_V<n>` (§1.3). */
export function activityKind(type: string): string {
  return type.replace(/^ACTIVITY_TYPE_/, '').replace(/_V\d+$/, '');
}

export function activityKeyword(type: string, resource: string, action: string, params: Record<string, unknown>): Activity {
  return { type, kind: activityKind(type), resource, action, params };
}

/** `approvers` and `credentials` from the approving votes (the initiator's included). */
export async function consensusKeywords(
  repos: Repositories,
  organizationId: string,
  votes: Pick<VoteRow, 'user_id' | 'public_key' | 'selection'>[],
): Promise<{ approvers: User[]; credentials: Credential[] }> {
  const approving = votes.filter((v) => v.selection === 'VOTE_SELECTION_APPROVED');
  const userIds = [...new Set(approving.map((v) => v.user_id))];
  const [users, tags, keys, authenticators] = await Promise.all([
    repos.users.getMany(organizationId, userIds),
    repos.users.tagIds(userIds),
    repos.apiKeys.listForUsers(organizationId, userIds),
    repos.authenticators.listForUsers(organizationId, userIds),
  ]);
  const byId = new Map(users.map((u) => [u.id, u]));
  const approvers: User[] = userIds
    .filter((id) => byId.has(id))
    .map((id) => {
      const u = byId.get(id)!;
      return { id, tags: tags.get(id) ?? [], email: u.user_email ?? '', alias: u.user_name };
    });
  const credentials: Credential[] = approving.flatMap((v) => {
    const key = keys.find((k) => k.user_id === v.user_id && k.public_key === v.public_key);
    if (key) return [{ id: key.id, user_id: key.user_id, type: key.credential_type, public_key: key.public_key }];
    // A passkey vote carries the authenticator's API-visible public key.
    const passkey = authenticators.find((a) => a.user_id === v.user_id && a.credential_public_key === v.public_key);
    return passkey
      ? [{ id: passkey.id, user_id: passkey.user_id, type: WEBAUTHN_CREDENTIAL_TYPE, credential_id: passkey.credential_id, public_key: passkey.credential_public_key }]
      : [];
  });
  return { approvers, credentials };
}

/** `wallet` + `wallet_account`, or `private_key`, for the key an activity signs or exports with. */
export async function signingTargetKeywords(repos: Repositories, organizationId: string, target: SigningTarget): Promise<PolicyContext> {
  if (target.kind === 'wallet_account') {
    const wallet = target.walletId ? await repos.wallets.get(organizationId, target.walletId) : undefined;
    return {
      wallet_account: { address: target.address ?? '' },
      ...(wallet ? { wallet: { id: wallet.id, imported: wallet.imported === 1, exported: wallet.exported === 1, label: wallet.name } } : {}),
    };
  }
  const key = await repos.privateKeys.get(organizationId, target.id);
  if (!key) return {};
  const tags = await repos.privateKeys.tagIdsOf([key.id]);
  return {
    private_key: { id: key.id, tags: tags.get(key.id) ?? [], imported: key.imported === 1, exported: key.exported === 1, label: key.name },
  };
}
