// Organizations: the root organization created by `sigil init`, renaming, and the
// v1OrganizationData record served by get_organization (swagger v1OrganizationData).
import { SigilError, invalid } from '../../errors/errors.js';
import { requireAll } from '../lookup.js';
import type { OrganizationRow, Repositories } from '../../store/index.js';
import { checkName } from '../identity/contacts.js';
import type { ActivityContext } from '../context.js';
import { tagRecord } from './user-tags.js';
import { userRecords } from '../identity/users.js';

export async function requireOrganization(repos: Repositories, id: string): Promise<OrganizationRow> {
  const org = await repos.organizations.get(id);
  if (!org) throw new SigilError('ORGANIZATION_NOT_FOUND', `no organization found with the given ID: ${id}`);
  return org;
}

export async function renameOrganization(ctx: ActivityContext, name: string) {
  checkName(name, 'organizationName');
  await ctx.repos.organizations.rename(ctx.organization.id, name, ctx.now);
  return { organizationId: ctx.organization.id, organizationName: name };
}

export async function rootQuorum(repos: Repositories, org: OrganizationRow) {
  return { threshold: org.root_quorum_threshold, userIds: await repos.organizations.rootQuorumUserIds(org.id) };
}

export async function organizationData(repos: Repositories, org: OrganizationRow) {
  const users = await repos.users.list(org.id);
  const tags = await repos.userTags.list(org.id);
  return {
    organizationId: org.id,
    name: org.name,
    users: await userRecords(repos, org.id, users),
    policies: [],
    privateKeys: [],
    invitations: [],
    tags: tags.map(tagRecord),
    rootQuorum: await rootQuorum(repos, org),
    features: [],
    wallets: [],
    smartContractInterfaceReferences: [],
  };
}

/** update_root_quorum (docs/reference/organizations.md): threshold 1..number of members, all of them users here. */
export async function updateRootQuorum(ctx: ActivityContext, threshold: number, userIds: string[]) {
  const { ids } = await requireAll(userIds, (u) => ctx.repos.users.getMany(ctx.organization.id, u), 'quorum users missing: not users of this organization');
  if (!Number.isInteger(threshold) || threshold < 1) throw invalid('quorum threshold must be non-zero integer');
  if (ids.length === 0) throw invalid('quorum users missing: the root quorum needs at least one user');
  if (threshold > ids.length) throw invalid(`quorum threshold ${threshold} exceeds the ${ids.length} quorum users`);
  await ctx.repos.organizations.setRootQuorum(ctx.organization.id, threshold, ids, ctx.now);
}
