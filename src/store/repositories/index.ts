// The repositories of one database or transaction, as the store hands them out (src/store/index.ts
// binds them; src/store/cached-repositories.ts answers the hot reads from memory). Declared apart from
// the store so both can name the set without importing each other.
import type { ActivitiesRepo } from './activities.js';
import type { ApiKeysRepo } from './api-keys.js';
import type { AuditLogRepo } from './audit-log.js';
import type { AuthProxyConfigsRepo } from './auth-proxy-configs.js';
import type { AuthenticatorsRepo } from './authenticators.js';
import type { BootProofsRepo } from './boot-proofs.js';
import type { ContractInterfacesRepo } from './contract-interfaces.js';
import type { EmailEventsRepo } from './email-events.js';
import type { ImportBundlesRepo } from './import-bundles.js';
import type { InvitationsRepo } from './invitations.js';
import type { IpAllowlistsRepo } from './ip-allowlists.js';
import type { MetaRepo } from './meta.js';
import type { MfaPoliciesRepo } from './mfa-policies.js';
import type { OauthProvidersRepo } from './oauth-providers.js';
import type { Oauth2CredentialsRepo } from './oauth2-credentials.js';
import type { OrganizationsRepo } from './organizations.js';
import type { OtpsRepo } from './otps.js';
import type { PoliciesRepo, PolicyEvaluationsRepo } from './policies.js';
import type { PrivateKeysRepo } from './private-keys.js';
import type { QuotasRepo } from './quotas.js';
import type { RateLimitsRepo } from './rate-limits.js';
import type { SecretsRepo } from './secrets.js';
import type { OrganizationKeysRepo } from './organization-keys.js';
import type { SealedColumnsRepo } from './sealed-columns.js';
import type { SendTransactionsRepo } from './send-transactions.js';
import type { SessionProfilesRepo } from './session-profiles.js';
import type { UserTagsRepo } from './user-tags.js';
import type { UsersRepo } from './users.js';
import type { VelocityControlsRepo } from './velocity-controls.js';
import type { WalletsRepo } from './wallets.js';
import type { WebhooksRepo } from './webhooks.js';

export interface Repositories {
  /**
   * A value derived from the organization's rarely-changing data (compiled policies, rendered user
   * records), kept by the read cache while the organization's generation stands; computed each time
   * where there is no cache (transactions, the CLI).
   */
  memo<T>(organizationId: string, key: string, load: () => Promise<T>): Promise<T>;
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
  velocityControls: VelocityControlsRepo;
  sessionProfiles: SessionProfilesRepo;
  secrets: SecretsRepo;
  organizationKeys: OrganizationKeysRepo;
  sealedColumns: SealedColumnsRepo;
  mfaPolicies: MfaPoliciesRepo;
  invitations: InvitationsRepo;
  emailEvents: EmailEventsRepo;
  sendTransactions: SendTransactionsRepo;
  webhooks: WebhooksRepo;
}
