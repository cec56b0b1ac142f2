// Organizations: the root organization created by `sigil init`, renaming, and the
// v1OrganizationData record served by get_organization (swagger v1OrganizationData).
import { SigilError } from '../errors/errors.js';
import type { OrganizationRow, Repositories } from '../store/index.js';
import { checkName } from './contacts.js';
import type { ActivityContext } from './context.js';
import { tagRecord } from './user-tags.js';
import { userRecords } from './users.js';

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
