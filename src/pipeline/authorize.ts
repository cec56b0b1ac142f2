// Authorization of an activity before it runs (turnkey-semantics.md §1.4, §2): the root quorum may
// do anything; root-quorum-only activities admit nobody else; everyone else needs a policy, and
// until the policy engine is enabled no policy exists, so they are refused with a clear 403.
// A parent organization's credential may read a sub-organization but not write to it.
import type { Caller } from '../domain/context.js';
import { notAuthorized } from '../errors/errors.js';
import type { ActivityDeclaration } from '../operations/define.js';
import type { OrganizationRow, Repositories } from '../store/index.js';

export type Decision = { outcome: 'allow' } | { outcome: 'consensus_needed' };

export async function authorizeActivity(
  repos: Repositories,
  decl: ActivityDeclaration,
  type: string,
  org: OrganizationRow,
  caller: Caller,
): Promise<Decision> {
  if (caller.organizationId !== org.id) {
    throw notAuthorized(
      'request not authorized: a credential of the parent organization cannot submit activities to a sub-organization',
    );
  }
  const isRoot = await repos.organizations.isRootQuorumMember(org.id, caller.user.id);
  if (isRoot) {
    // One approval (the submission itself) meets a threshold of 1; more needs votes.
    return org.root_quorum_threshold <= 1 ? { outcome: 'allow' } : { outcome: 'consensus_needed' };
  }
  if (decl.authorization === 'root_quorum_only') {
    throw notAuthorized(`request not authorized: only the root quorum can run ${type}`);
  }
  throw notAuthorized(
    `request not authorized: no policy allows ${type} for user ${caller.user.id}, and only root quorum members may submit activities without one`,
  );
}
