// The store: an opened database plus the repositories bound to it or to a transaction. Only this
// folder holds SQL; everything above it talks to repositories.
import { sql, type Kysely } from 'kysely';
import { openDatabase, type Dialect } from './db.js';
import type { Database } from './schema.js';
import { GroupCommit } from './group-commit.js';
import { ActivitiesRepo } from './repositories/activities.js';
import { ApiKeysRepo } from './repositories/api-keys.js';
import { MetaRepo } from './repositories/meta.js';
import { OrganizationsRepo } from './repositories/organizations.js';
import { UserTagsRepo } from './repositories/user-tags.js';
import { UsersRepo } from './repositories/users.js';
import { PrivateKeysRepo } from './repositories/private-keys.js';
import { WalletsRepo } from './repositories/wallets.js';
import { ImportBundlesRepo } from './repositories/import-bundles.js';
import { BootProofsRepo } from './repositories/boot-proofs.js';
import { PoliciesRepo, PolicyEvaluationsRepo } from './repositories/policies.js';
import { ContractInterfacesRepo } from './repositories/contract-interfaces.js';
import { AuthenticatorsRepo } from './repositories/authenticators.js';
import { IpAllowlistsRepo } from './repositories/ip-allowlists.js';
import { OauthProvidersRepo } from './repositories/oauth-providers.js';
import { Oauth2CredentialsRepo } from './repositories/oauth2-credentials.js';
import { AuditLogRepo } from './repositories/audit-log.js';
import { RateLimitsRepo } from './repositories/rate-limits.js';
import { QuotasRepo } from './repositories/quotas.js';
import { OtpsRepo } from './repositories/otps.js';
import { AuthProxyConfigsRepo } from './repositories/auth-proxy-configs.js';

export { isUniqueViolation } from './db.js';
export type { ActivityRow, VoteRow } from './repositories/activities.js';
export type { ApiKeyRow } from './repositories/api-keys.js';
export type { OrganizationRow } from './repositories/organizations.js';
export type { UserTagRow } from './repositories/user-tags.js';
export type { UserRow } from './repositories/users.js';
export type { Page } from './repositories/pagination.js';
export type { WalletAccountRow, WalletRow } from './repositories/wallets.js';
export type { ImportBundleRow } from './repositories/import-bundles.js';
export type { PolicyChanges, PolicyEvaluationRow, PolicyRow } from './repositories/policies.js';
export type { SmartContractInterfaceRow } from './repositories/contract-interfaces.js';
export type { AuthenticatorRow } from './repositories/authenticators.js';
export type { IpAllowlistRow } from './repositories/ip-allowlists.js';
export type { OauthProviderRow } from './repositories/oauth-providers.js';
export type { Oauth2CredentialRow } from './repositories/oauth2-credentials.js';
export type { AuditLogRow } from './repositories/audit-log.js';
export type { BucketRequest, BucketState } from './repositories/rate-limits.js';
export type { QuotaTable } from './repositories/quotas.js';
export type { OtpRow } from './repositories/otps.js';
export type { AuthProxyConfigRow } from './repositories/auth-proxy-configs.js';
export type { PrivateKeyAddressRow, PrivateKeyRow, PrivateKeyTagRow } from './repositories/private-keys.js';

export interface Repositories {
  /**
   * Inside a transaction: runs `fn` in a savepoint, undoing only its writes when it throws (the
   * error is rethrown). Used when a failure must be recorded beside the writes that led to it.
   */
  savepoint<T>(fn: () => Promise<T>): Promise<T>;
  meta: MetaRepo;
  organizations: OrganizationsRepo;
  users: UsersRepo;
  apiKeys: ApiKeysRepo;
  userTags: UserTagsRepo;
  activities: ActivitiesRepo;
  wallets: WalletsRepo;
  privateKeys: PrivateKeysRepo;
  importBundles: ImportBundlesRepo;
  bootProofs: BootProofsRepo;
  policies: PoliciesRepo;
  policyEvaluations: PolicyEvaluationsRepo;
  contractInterfaces: ContractInterfacesRepo;
  authenticators: AuthenticatorsRepo;
  ipAllowlists: IpAllowlistsRepo;
  oauthProviders: OauthProvidersRepo;
  oauth2Credentials: Oauth2CredentialsRepo;
  auditLog: AuditLogRepo;
  rateLimits: RateLimitsRepo;
  quotas: QuotasRepo;
  otps: OtpsRepo;
  authProxyConfigs: AuthProxyConfigsRepo;
}

function bind(db: Kysely<Database>): Repositories {
  return {
    savepoint: async <T>(fn: () => Promise<T>): Promise<T> => {
      await sql`savepoint sigil_step`.execute(db);
      try {
        const value = await fn();
        await sql`release savepoint sigil_step`.execute(db);
        return value;
      } catch (err) {
        await sql`rollback to savepoint sigil_step`.execute(db);
        await sql`release savepoint sigil_step`.execute(db);
        throw err;
      }
    },
    meta: new MetaRepo(db),
    organizations: new OrganizationsRepo(db),
    users: new UsersRepo(db),
    apiKeys: new ApiKeysRepo(db),
    userTags: new UserTagsRepo(db),
    activities: new ActivitiesRepo(db),
    wallets: new WalletsRepo(db),
    privateKeys: new PrivateKeysRepo(db),
    importBundles: new ImportBundlesRepo(db),
    bootProofs: new BootProofsRepo(db),
    policies: new PoliciesRepo(db),
    policyEvaluations: new PolicyEvaluationsRepo(db),
    contractInterfaces: new ContractInterfacesRepo(db),
    authenticators: new AuthenticatorsRepo(db),
    ipAllowlists: new IpAllowlistsRepo(db),
    oauthProviders: new OauthProvidersRepo(db),
    oauth2Credentials: new Oauth2CredentialsRepo(db),
    auditLog: new AuditLogRepo(db),
    rateLimits: new RateLimitsRepo(db),
    quotas: new QuotasRepo(db),
    otps: new OtpsRepo(db),
    authProxyConfigs: new AuthProxyConfigsRepo(db),
  };
}

export class Store {
  /** Repositories outside any transaction, for reads. */
  readonly repos: Repositories;
  private readonly group: GroupCommit;

  private constructor(
    private readonly db: Kysely<Database>,
    readonly dialect: Dialect,
    readonly location: string,
  ) {
    this.repos = bind(db);
    this.group = new GroupCommit(db);
  }

  static async open(opts: { dataDir: string; databaseUrl?: string }): Promise<Store> {
    const { db, dialect, location } = await openDatabase(opts);
    return new Store(db, dialect, location);
  }

  /** Runs `fn` in one transaction: all of its writes commit together or none do. */
  async transaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(bind(trx)));
  }

  /**
   * Runs a short write unit that needs no reads of its own in a shared, grouped commit; resolves once
   * the commit holding it is durable. Units are isolated from each other by savepoints.
   */
  async groupCommit<T>(fn: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.group.submit((trx) => fn(bind(trx)));
  }

  async ping(): Promise<void> {
    await this.repos.meta.get('ping');
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}
