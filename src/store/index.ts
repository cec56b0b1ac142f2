// The store: an opened database plus the repositories bound to it or to a transaction. Only this
// folder holds SQL; everything above it talks to repositories.
import { sql, type Kysely } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';
import { openDatabase, type CheckpointOptions, type DatabaseStats, type Dialect } from './db.js';
import type { Database } from './schema.js';
import { GroupCommit, type GroupCommitStats, type RecordUnit } from './group-commit.js';
import { AuditLane, type AuditSealer, type PendingAuditEntry } from './audit-lane.js';
import type { RawDb } from './raw.js';
import { ReadCache } from './read-cache.js';
import { cachedRepositories } from './cached-repositories.js';
import type { Repositories } from './repositories/index.js';
import { hotReads, type HotReads } from './hot-reads.js';
import type { Checkpointer, WalSync } from './wal-sync.js';
import type { ActivityRow } from './repositories/activities.js';
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
import { VelocityControlsRepo } from './repositories/velocity-controls.js';
import { SessionProfilesRepo } from './repositories/session-profiles.js';
import { SecretsRepo } from './repositories/secrets.js';
import { OrganizationKeysRepo } from './repositories/organization-keys.js';
import { SealedColumnsRepo } from './repositories/sealed-columns.js';
import { MfaPoliciesRepo } from './repositories/mfa-policies.js';
import { InvitationsRepo } from './repositories/invitations.js';
import { EmailEventsRepo } from './repositories/email-events.js';
import { SendTransactionsRepo } from './repositories/send-transactions.js';
import { WebhooksRepo } from './repositories/webhooks.js';

export { isUniqueViolation } from './db.js';
export type { Repositories } from './repositories/index.js';
export { DuplicateActivity, type RecordUnit } from './group-commit.js';
export type { AuditCheckpointRow, AuditEntryRow, AuditHead, AuditSealer, PendingAuditEntry } from './audit-lane.js';
export type { ActivityRow, VoteRow } from './repositories/activities.js';
export type { ApiKeyRow } from './repositories/api-keys.js';
export type { OrganizationRow } from './repositories/organizations.js';
export type { UserTagRow } from './repositories/user-tags.js';
export type { UserRow } from './repositories/users.js';
export type { Page } from './repositories/pagination.js';
export type { WalletAccountRow, WalletRow } from './repositories/wallets.js';
export { NameTaken } from './repositories/wallets.js';
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
export { SecretNameTaken, type SecretRow } from './repositories/secrets.js';
export type { OrganizationKeyRow } from './repositories/organization-keys.js';
export { ORGANIZATION_SEALED_COLUMNS, type SealedColumn } from './repositories/sealed-columns.js';
export type { VelocityControlRow } from './repositories/velocity-controls.js';
export type { SessionProfileRow } from './repositories/session-profiles.js';
export type { ActivityMfaRow, MfaPolicyRow } from './repositories/mfa-policies.js';
export type { InvitationRow } from './repositories/invitations.js';
export type { EmailEventRow } from './repositories/email-events.js';
export type { SendTransactionRow } from './repositories/send-transactions.js';
export type { OutboxState, WebhookDeliveryRow, WebhookEndpointRow } from './repositories/webhooks.js';
export type { PrivateKeyAddressRow, PrivateKeyRow, PrivateKeyTagRow } from './repositories/private-keys.js';

function bind(db: Kysely<Database>, pendingAudit?: PendingAuditEntry[]): Repositories {
  return {
    memo: (_organizationId, _key, load) => load(),
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
    auditLog: new AuditLogRepo(db, pendingAudit),
    rateLimits: new RateLimitsRepo(db),
    quotas: new QuotasRepo(db),
    otps: new OtpsRepo(db),
    authProxyConfigs: new AuthProxyConfigsRepo(db),
    velocityControls: new VelocityControlsRepo(db),
    sessionProfiles: new SessionProfilesRepo(db),
    secrets: new SecretsRepo(db),
    organizationKeys: new OrganizationKeysRepo(db),
    sealedColumns: new SealedColumnsRepo(db),
    mfaPolicies: new MfaPoliciesRepo(db),
    invitations: new InvitationsRepo(db),
    emailEvents: new EmailEventsRepo(db),
    sendTransactions: new SendTransactionsRepo(db),
    webhooks: new WebhooksRepo(db),
  };
}

/** What a request reads through: repositories served from the read cache where they can be. */
export interface RequestReads {
  repos: Repositories;
  /** Submissions: the activity already recorded with the request's fingerprint, if any. */
  existing?: ActivityRow;
}

/** How often this process signs its audit streams' heads while it writes (src/store/audit-lane.ts). */
const CHECKPOINT_INTERVAL_MS = 5_000;

export class Store {
  /** Repositories outside any transaction, for reads. */
  readonly repos: Repositories;
  /**
   * Repositories for background work (the webhook dispatcher): on PostgreSQL over a small pool of
   * their own, outside the request path's connections and round-trip count; on SQLite `repos`.
   */
  readonly background: Repositories;
  private readonly group: GroupCommit<Repositories>;
  private readonly lane = new AuditLane();
  private readonly cache: ReadCache;
  /** The generation (and fingerprint) reads of the request path; batched per event-loop turn on PostgreSQL. */
  private readonly hot: HotReads;
  private checkpointTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly db: Kysely<Database>,
    readonly dialect: Dialect,
    readonly location: string,
    /** Statements sent to the database so far (GET /metrics). */
    readonly stats: DatabaseStats,
    private readonly raw: RawDb,
    sqliteWriter: BetterSqlite3.Database | undefined,
    private readonly walSync: WalSync | undefined,
    private readonly checkpointer: Checkpointer | undefined,
    private readonly backgroundDb: Kysely<Database> | undefined,
  ) {
    this.repos = bind(db);
    this.background = backgroundDb ? bind(backgroundDb) : this.repos;
    this.group = new GroupCommit({
      db,
      dialect,
      raw,
      lane: this.lane,
      sqliteWriter,
      bind,
      durable: walSync ? () => walSync.sync() : undefined,
      syncing: walSync ? () => walSync.inFlight() : undefined,
      restartLog: checkpointer ? () => checkpointer.quiet() : undefined,
    });
    this.hot = hotReads(raw);
    this.cache = new ReadCache(async (ids) => (await this.hot.read(ids)).generations);
  }

  static async open(opts: { dataDir: string; databaseUrl?: string; checkpoints?: CheckpointOptions }): Promise<Store> {
    const { db, dialect, location, stats, raw, sqliteWriter, walSync, checkpointer, backgroundDb } = await openDatabase(opts);
    return new Store(db, dialect, location, stats, raw, sqliteWriter, walSync, checkpointer, backgroundDb);
  }

  /** Grouped commits so far and the units they held (GET /metrics). */
  get commitGroups(): GroupCommitStats {
    return this.group.stats;
  }

  /**
   * Lets transactions record audit entries: `sealer` (src/audit) seals them into this process's
   * stream, and the stream's head is signed into a checkpoint every few seconds while it moves.
   */
  attachAudit(sealer: AuditSealer, opts: { checkpointEntries?: number } = {}): void {
    this.lane.attach(sealer, { everyEntries: opts.checkpointEntries, onDue: () => void this.checkpoint().catch(() => undefined) });
    // Attached again after an unseal (docs/operator-guide.md "Custody"): a new stream, one timer.
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    this.checkpointTimer = setInterval(() => void this.checkpoint().catch(() => undefined), CHECKPOINT_INTERVAL_MS);
    this.checkpointTimer.unref();
  }

  /** Writes checkpoints for the heads committed since the last ones. */
  async checkpoint(now = Date.now()): Promise<void> {
    const rows = this.lane.takeCheckpoints(now);
    if (rows.length === 0) return;
    try {
      await this.repos.auditLog.insertCheckpoints(rows);
      this.lane.notify(rows);
    } catch (err) {
      this.lane.restoreCheckpoints(rows);
      throw err;
    }
  }

  /**
   * The reads of one request to `organizationId` (and its parent), stamped with `publicKey` when an
   * API key signed it, signing with the account at `address` when it names one: the cache generations
   * of the organizations it touches (with, for a submission, the activity its fingerprint names), and
   * for an organization this process holds nothing for, what authentication, policy and signing read,
   * in the same statement on PostgreSQL (src/store/hot-reads.ts, cold-reads.ts), kept by the read
   * cache for the request like any value it loads. The hot reads are then served from memory. An
   * organization's parent never changes, so it is learnt once.
   */
  async requestReads(
    organizationId: string,
    submission: { organizationId: string; fingerprint: string; timestampMs: number } | undefined,
    publicKey: string | undefined,
    address?: string,
  ): Promise<RequestReads> {
    const coldRequest = this.cache.holds(organizationId) ? undefined : { organizationId, publicKey, address };
    let parent = this.cache.parentOf(organizationId);
    if (parent === undefined && !coldRequest) {
      const org = await this.repos.organizations.get(organizationId);
      // An unknown organization is refused by the caller (requireOrganization) with the reads below.
      parent = org ? org.parent_organization_id : null;
      if (org) this.cache.rememberParent(org.id, parent);
    }
    const ids = parent ? [organizationId, parent] : [organizationId];
    const { generations, activity, cold } = await this.hot.read(ids, submission, coldRequest);
    const found = cold?.organization;
    if (found && parent === undefined) {
      this.cache.rememberParent(found.id, found.parent_organization_id);
      // The parent's generation came with the cold read, in its snapshot.
      if (found.parent_organization_id) ids.push(found.parent_organization_id);
    }
    for (const s of cold?.seeds ?? []) if (!generations.has(s.organizationId)) generations.set(s.organizationId, s.generation);
    const repos = cachedRepositories(this.repos, this.cache.observe(generations, ids));
    for (const s of cold?.seeds ?? []) this.cache.seed(s.organizationId, s.generation, s.values);
    return { repos, existing: activity };
  }

  /**
   * Runs `fn` in one transaction: all of its writes, and the audit entries it appends, commit
   * together or none do. Resolves once the commit is durable, unless `durable: false`.
   */
  async transaction<T>(fn: (repos: Repositories) => Promise<T>, opts: { durable?: boolean } = {}): Promise<T> {
    // SQLite: not while the log is being handed off to start over (src/store/wal-sync.ts Checkpointer).
    const handOff = this.checkpointer?.quiet();
    if (handOff) await handOff;
    const result = await this.db.connection().execute(async (conn) => {
      await sql.raw(this.dialect === 'sqlite' ? 'begin immediate' : 'begin').execute(conn);
      try {
        const pending: PendingAuditEntry[] = [];
        const result = await fn(bind(conn, pending));
        await this.lane.commit(pending, async (rows) => {
          if (rows.length > 0) await conn.insertInto('audit_entries').values(rows).execute();
          await sql.raw('commit').execute(conn);
        });
        return result;
      } catch (err) {
        await sql.raw('rollback').execute(conn).catch(() => undefined);
        throw err;
      }
    });
    // Durable before anyone hears of it (SQLite syncs its log off the event loop). `durable: false`
    // is for a step whose result nobody hears of by itself: a later commit of the same request is
    // synced, and its answer waits for settled(), so this one is durable before anything depends on it.
    if (opts.durable !== false) await this.walSync?.sync();
    return result;
  }

  /**
   * Resolves once every commit this process has made is durable: a response that shows data read
   * from the database waits for it, so no one is shown what a power loss could still take back.
   */
  settled(): Promise<void> {
    return this.walSync ? this.walSync.settled() : Promise.resolve();
  }

  /**
   * Records a finished request's rows in a shared, grouped commit; resolves once the commit holding
   * them is durable. Throws DuplicateActivity when an activity with the same fingerprint won.
   */
  commitRecords(unit: RecordUnit<Repositories>): Promise<void> {
    return this.group.submit(unit);
  }

  async ping(): Promise<void> {
    await this.repos.meta.get('ping');
  }

  async close(): Promise<void> {
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    await this.checkpoint().catch(() => undefined);
    await this.walSync?.close();
    await this.checkpointer?.stop();
    await this.raw.close();
    await this.backgroundDb?.destroy();
    await this.db.destroy();
  }
}
