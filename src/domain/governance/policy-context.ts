// What a policy sees (docs/reference/policies.md "Keywords"): the `activity` keyword of any activity, the
// consensus keywords `approvers` and `credentials` built from the votes cast so far, and the
// resource keywords (`wallet`, `wallet_account`, `private_key`, `eth.*`, `solana.tx`, `tron.tx`,
// `bitcoin.tx`) of the signing and export activities that target them, and `simulation` (docs/policies.md
// "Simulation before approval") where a simulator takes the transaction.
import { caseInsensitive, type Activity, type Credential, type PolicyContext, type User } from '../../policy/index.js';
import type { Repositories, VoteRow } from '../../store/index.js';
import { transactionPolicyKeywords, type parseForSigning, type SigningTarget } from '../keys/signing.js';
import { decodeEthCallForPolicy } from '../keys/contract-interfaces.js';
import { simulationKeyword, type AssetChanges } from '../keys/simulation.js';
import { WEBAUTHN_CREDENTIAL_TYPE } from '../identity/authenticators.js';

/** Version-agnostic kind: the type without `ACTIVITY_TYPE_` and a trailing `_V<n>` (docs/reference/policies.md "Keywords"). */
export function activityKind(type: string): string {
  return type.replace(/^ACTIVITY_TYPE_/, '').replace(/_V\d+$/, '');
}

export function activityKeyword(type: string, resource: string, action: string, params: Record<string, unknown>): Activity {
  return { type, kind: activityKind(type), resource, action, params };
}

type ApprovalVote = Pick<VoteRow, 'user_id' | 'public_key' | 'selection'>;

/** The users and credentials that approvals can name: what `approvers` and `credentials` are built from. */
export interface ConsensusRecords {
  users: Map<string, User>;
  /** Every credential of those users, by the public key a vote records. */
  credentials: Credential[];
}

/** Reads the records of `userIds` (all of the organization's users when omitted). */
export async function loadConsensusRecords(repos: Repositories, organizationId: string, userIds?: string[]): Promise<ConsensusRecords> {
  const rows = userIds ? await repos.users.getMany(organizationId, userIds) : await repos.users.list(organizationId);
  const ids = rows.map((u) => u.id);
  const [tags, keys, authenticators] = await Promise.all([
    repos.users.tagIds(ids),
    repos.apiKeys.listForUsers(organizationId, ids),
    repos.authenticators.listForUsers(organizationId, ids),
  ]);
  return {
    users: new Map(rows.map((u) => [u.id, { id: u.id, tags: tags.get(u.id) ?? [], email: u.user_email ?? '', alias: u.user_name }])),
    credentials: [
      ...keys.map((k) => ({ id: k.id, user_id: k.user_id, type: k.credential_type, public_key: k.public_key })),
      // A passkey vote carries the authenticator's API-visible public key.
      ...authenticators.map((a) => ({ id: a.id, user_id: a.user_id, type: WEBAUTHN_CREDENTIAL_TYPE, credential_id: a.credential_id, public_key: a.credential_public_key })),
    ],
  };
}

/** `approvers` and `credentials` from approving votes over records already read. */
export function consensusKeywordsFrom(records: ConsensusRecords, votes: ApprovalVote[]): { approvers: User[]; credentials: Credential[] } {
  const approving = votes.filter((v) => v.selection === 'VOTE_SELECTION_APPROVED');
  const userIds = [...new Set(approving.map((v) => v.user_id))];
  const approvers = userIds.flatMap((id) => {
    const user = records.users.get(id);
    return user ? [user] : [];
  });
  const credentials = approving.flatMap((v) => records.credentials.filter((c) => c.user_id === v.user_id && c.public_key === v.public_key).slice(0, 1));
  return { approvers, credentials };
}

/** `approvers` and `credentials` from the approving votes (the initiator's included). */
export async function consensusKeywords(
  repos: Repositories,
  organizationId: string,
  votes: ApprovalVote[],
): Promise<{ approvers: User[]; credentials: Credential[] }> {
  const userIds = [...new Set(votes.filter((v) => v.selection === 'VOTE_SELECTION_APPROVED').map((v) => v.user_id))];
  return consensusKeywordsFrom(await loadConsensusRecords(repos, organizationId, userIds), votes);
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

/**
 * Everything a policy sees of a transaction signed with `target` (sign_transaction, and
 * eth_send_transaction, which judges the transaction it builds exactly as sign_transaction would
 * judge it): the key's keywords, the chain's `*.tx` keyword, and for an Ethereum call to a contract
 * with an uploaded ABI the decoded call (docs/reference/policies.md "Keywords" contract_call_args).
 */
export async function transactionPolicyContext(
  repos: Repositories,
  organizationId: string,
  target: SigningTarget,
  parsed: ReturnType<typeof parseForSigning>,
  simulation?: AssetChanges,
): Promise<PolicyContext> {
  const keywords = transactionPolicyKeywords(parsed);
  const tx = keywords.eth?.tx;
  const decoded = tx && tx.to && tx.data.length > 2 ? await decodeEthCallForPolicy(repos, organizationId, tx.to, tx.data, { address: caseInsensitive }) : undefined;
  const eth = decoded && tx ? { eth: { tx: { ...tx, ...decoded } } } : {};
  const simulated = simulation ? { simulation: simulationKeyword(simulation, target.address ?? '') } : {};
  return { ...(await signingTargetKeywords(repos, organizationId, target)), ...keywords, ...eth, ...simulated };
}
