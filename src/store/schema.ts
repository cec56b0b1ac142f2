// Row types of Sigil's tables as Kysely sees them. Both dialects use the same column types:
// text for ids and JSON, bigint milliseconds for times, integer 0/1 for booleans, so one set of
// queries and one migration list serve SQLite and PostgreSQL.

export interface MetaTable {
  key: string;
  value: string;
}

export interface OrganizationTable {
  id: string;
  name: string;
  parent_organization_id: string | null;
  root_quorum_threshold: number;
  created_at: number;
  updated_at: number;
}

export interface RootQuorumMemberTable {
  organization_id: string;
  user_id: string;
}

export interface UserTable {
  id: string;
  organization_id: string;
  user_name: string;
  user_email: string | null;
  user_phone_number: string | null;
  /** When an OTP verification token proved the email (migration 014); null: not verified. */
  email_verified_at: number | null;
  phone_number_verified_at: number | null;
  /**
   * When the parent organization set the contact (create_sub_organization; migration 026): a login
   * through the parent may match it although it is not verified. Null once the user's own
   * organization changes it.
   */
  email_vouched_at: number | null;
  phone_number_vouched_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ApiKeyTable {
  id: string;
  organization_id: string;
  user_id: string;
  api_key_name: string;
  public_key: string;
  curve_type: string;
  credential_type: string;
  expiration_seconds: string | null;
  /** Absolute expiry in ms, null for keys that never expire. */
  expires_at: number | null;
  created_at: number;
  updated_at: number;
  /** The session profile a login key was created with (migration 020); null for other keys. */
  session_profile_id: string | null;
}

export interface UserTagTable {
  id: string;
  organization_id: string;
  name: string;
  created_at: number;
  updated_at: number;
}

export interface UserTagAssignmentTable {
  tag_id: string;
  user_id: string;
  organization_id: string;
}

export interface ActivityTable {
  id: string;
  organization_id: string;
  type: string;
  status: string;
  fingerprint: string;
  /** JSON of the `intent` object ({<intentMember>: parameters}). */
  intent: string;
  result: string | null;
  failure: string | null;
  pending_parameters: string | null;
  /** JSON array of v1AppProof when the submission asked for app proofs. */
  app_proofs: string | null;
  /** JSON of the asset changes its transaction was simulated to make at submission (migration 036), when a simulation ran. */
  simulation: string | null;
  user_id: string;
  timestamp_ms: number;
  created_at: number;
  updated_at: number;
}

export interface VoteTable {
  id: string;
  activity_id: string;
  organization_id: string;
  user_id: string;
  selection: string;
  message: string;
  public_key: string;
  signature: string;
  scheme: string;
  created_at: number;
}

export interface Database {
  meta: MetaTable;
  organizations: OrganizationTable;
  root_quorum_members: RootQuorumMemberTable;
  users: UserTable;
  api_keys: ApiKeyTable;
  user_tags: UserTagTable;
  user_tag_assignments: UserTagAssignmentTable;
  activities: ActivityTable;
  votes: VoteTable;
  wallets: WalletTable;
  wallet_accounts: WalletAccountTable;
  private_keys: PrivateKeyTable;
  private_key_addresses: PrivateKeyAddressTable;
  private_key_tags: PrivateKeyTagTable;
  private_key_tag_assignments: PrivateKeyTagAssignmentTable;
  import_bundles: ImportBundleTable;
  boot_proofs: BootProofTable;
  organization_features: OrganizationFeatureTable;
  policies: PolicyTable;
  smart_contract_interfaces: SmartContractInterfaceTable;
  policy_evaluations: PolicyEvaluationTable;
  authenticators: AuthenticatorTable;
  ip_allowlists: IpAllowlistTable;
  oauth_providers: OauthProviderTable;
  oauth2_credentials: Oauth2CredentialTable;
  audit_log: AuditLogTable;
  audit_entries: AuditEntryTable;
  audit_checkpoints: AuditCheckpointTable;
  cache_generations: CacheGenerationTable;
  quota_counts: QuotaCountTable;
  rate_limits: RateLimitTable;
  otps: OtpTable;
  auth_proxy_configs: AuthProxyConfigTable;
  velocity_controls: VelocityControlTable;
  velocity_groups: VelocityGroupTable;
  velocity_counts: VelocityCountTable;
  session_profiles: SessionProfileTable;
  secrets: SecretTable;
  organization_keys: OrganizationKeyTable;
  mfa_policies: MfaPolicyTable;
  activity_mfa: ActivityMfaTable;
  invitations: InvitationTable;
  email_events: EmailEventTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_deliveries: WebhookDeliveryTable;
  send_transactions: SendTransactionTable;
  evm_nonces: EvmNonceTable;
}

export interface WalletTable {
  id: string;
  organization_id: string;
  name: string;
  /** Barrier ciphertext of the mnemonic, bound to (wallets, id, mnemonic). */
  mnemonic: string;
  exported: number;
  imported: number;
  created_at: number;
  updated_at: number;
}

export interface WalletAccountTable {
  id: string;
  organization_id: string;
  wallet_id: string;
  curve: string;
  path_format: string;
  /** The path as the request gave it. */
  path: string;
  /** The path in canonical form (ed25519: every level hardened); unique within a wallet. */
  path_key: string;
  address_format: string;
  address: string;
  public_key: string;
  /** Barrier ciphertext of the derived private key, bound to (wallet_accounts, id, private_key). */
  private_key: string;
  /** Set when this account's key (or its wallet) has been exported. */
  exported: number;
  name: string | null;
  created_at: number;
  updated_at: number;
}

export interface PrivateKeyTable {
  id: string;
  organization_id: string;
  name: string;
  curve: string;
  public_key: string;
  /** Barrier ciphertext bound to (private_keys, id, private_key). */
  private_key: string;
  exported: number;
  imported: number;
  created_at: number;
  updated_at: number;
}

export interface PrivateKeyAddressTable {
  private_key_id: string;
  organization_id: string;
  address_format: string;
  address: string;
  position: number;
}

export interface PrivateKeyTagTable {
  id: string;
  organization_id: string;
  name: string;
  created_at: number;
  updated_at: number;
}

export interface PrivateKeyTagAssignmentTable {
  tag_id: string;
  private_key_id: string;
  organization_id: string;
}

export interface ImportBundleTable {
  id: string;
  organization_id: string;
  user_id: string;
  /** 'wallet', 'private_key' or 'secret': the activity the bundle was issued for. */
  kind: string;
  /** Barrier ciphertext of the target key's private half, bound to (import_bundles, id, target_private_key). */
  target_private_key: string;
  /** The target's public key, uncompressed lowercase hex (migration 021; NULL on older rows). */
  target_public_key: string | null;
  import_bundle: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

export interface PolicyTable {
  id: string;
  organization_id: string;
  name: string;
  /** EFFECT_ALLOW or EFFECT_DENY. */
  effect: string;
  /** Policy-language sources; null when the policy has no such constraint. */
  condition: string | null;
  consensus: string | null;
  time: string | null;
  notes: string;
  created_at: number;
  updated_at: number;
}

export interface SmartContractInterfaceTable {
  id: string;
  organization_id: string;
  /** EVM: EIP-55 checksummed; Solana: base58 as given. */
  address: string;
  /** SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM or SMART_CONTRACT_INTERFACE_TYPE_SOLANA. */
  type: string;
  label: string;
  notes: string;
  /** The ABI or IDL JSON text exactly as uploaded. */
  interface: string;
  created_at: number;
  updated_at: number;
}

export interface PolicyEvaluationTable {
  id: string;
  organization_id: string;
  activity_id: string;
  vote_id: string | null;
  /** JSON array of {policyId, outcome}. */
  evaluations: string;
  created_at: number;
}

export interface BootProofTable {
  ephemeral_public_key: string;
  /** JSON of the v1BootProof record. */
  boot_proof: string;
  created_at: number;
}

export interface AuthenticatorTable {
  id: string;
  organization_id: string;
  user_id: string;
  name: string;
  /** base64url (no padding) of the raw credential id. */
  credential_id: string;
  /** base64url of the COSE_Key registered by the attestation (what assertions are verified with). */
  public_key: string;
  /** The key as the API shows it: compressed P-256 hex (ES256) or SPKI DER hex (RS256). */
  credential_public_key: string;
  /** COSE algorithm: -7 (ES256) or -257 (RS256). */
  algorithm: number;
  /** The highest signature counter seen; 0 for authenticators that do not count. */
  sign_count: number;
  /** JSON array of AUTHENTICATOR_TRANSPORT_* values. */
  transports: string;
  /** The attestation statement format (`none`, `packed`, …). */
  attestation_type: string;
  aaguid: string;
  model: string;
  created_at: number;
  updated_at: number;
}

export interface IpAllowlistTable {
  organization_id: string;
  /** '' for the organization-level allowlist, else the API key's public key (lowercase hex). */
  public_key: string;
  /** 0/1 for the organization-level list; null for an API key's list. */
  enabled: number | null;
  /** 'ALLOW' or 'DENY' when the client address cannot be evaluated. */
  on_evaluation_error: string;
  /** JSON array of {cidr, label, createdAt} (createdAt: ms epoch string), CIDRs normalized. */
  rules: string;
  created_at: number;
  updated_at: number;
}

export interface OauthProviderTable {
  id: string;
  organization_id: string;
  user_id: string;
  provider_name: string;
  /** The OIDC identity (iss, aud, sub); unique per organization. */
  issuer: string;
  audience: string;
  subject: string;
  created_at: number;
  updated_at: number;
}

/** An OAuth 2.0 client registered with an OAuth2-only provider (migration 011). */
export interface Oauth2CredentialTable {
  id: string;
  organization_id: string;
  provider: string;
  client_id: string;
  /** Barrier ciphertext of the client secret, bound to (oauth2_credentials, id, client_secret). */
  client_secret: string;
  created_at: number;
  updated_at: number;
}

export interface OtpTable {
  id: string;
  organization_id: string;
  /** 'OTP' (init_otp/verify_otp) or 'OTP_AUTH' (init_otp_auth/otp_auth). */
  flow: string;
  /** OTP_TYPE_EMAIL or OTP_TYPE_SMS. */
  otp_type: string;
  contact: string;
  /** init_otp `userIdentifier` ('' when absent), for the per-identifier rate limit. */
  user_identifier: string;
  /** hex HMAC-SHA256 of the code under `code_salt` (16 random bytes, hex). */
  code_hash: string;
  code_salt: string;
  /** Barrier ciphertext of the HPKE target private key, bound to (otps, id, target_private_key). */
  target_private_key: string;
  attempts: number;
  expires_at: number;
  used_at: number | null;
  verification_token_id: string | null;
  token_expires_at: number | null;
  token_used_at: number | null;
  /** The token's one signup use (create_sub_organization, auth proxy signup); migration 014. */
  token_signup_used_at: number | null;
  created_at: number;
}

/** An auth proxy configuration (migration 014; docs/reference/auth-proxy.md). */
export interface AuthProxyConfigTable {
  id: string;
  /** The organization the proxy acts for (a parent organization). */
  organization_id: string;
  /** The proxy's own user and API key in that organization. */
  user_id: string;
  api_key_id: string;
  /** Barrier ciphertext of the API key's P-256 private key, bound to (auth_proxy_configs, id, private_key). */
  private_key: string;
  /** JSON of the AuthProxySettings (src/domain/identity/auth-proxy-configs.ts). */
  settings: string;
  enabled: number;
  created_at: number;
  updated_at: number;
}

/** An audit entry of a process's stream (migration 016; src/audit/chain.ts). */
export interface AuditEntryTable {
  stream: string;
  seq: number;
  organization_id: string | null;
  kind: string;
  activity_id: string | null;
  entry: string;
  mac: string;
  created_at: number;
}

/** A stream's head signed by the deployment signer (migration 016). */
export interface AuditCheckpointTable {
  stream: string;
  seq: number;
  mac: string;
  signature: string;
  created_at: number;
}

/** An organization's cache generation, bumped by triggers on every write to a cached table (migration 015). */
export interface CacheGenerationTable {
  organization_id: string;
  generation: number;
}

/** An organization's number of rows of a counted table (migration 017), kept by triggers. */
export interface QuotaCountTable {
  organization_id: string;
  name: string;
  count: number;
}

/** The first, single hash chain of the audit log (migration 009), verified as it was written. */
export interface AuditLogTable {
  seq: number;
  organization_id: string | null;
  kind: string;
  activity_id: string | null;
  entry: string;
  prev_hash: string;
  hash: string;
  created_at: number;
}

export interface OrganizationFeatureTable {
  organization_id: string;
  /** `FEATURE_NAME_*`. */
  name: string;
  value: string;
  updated_at: number;
}

/** A rate-limit token bucket (migration 013; src/store/repositories/rate-limits.ts). */
export interface RateLimitTable {
  bucket: string;
  tokens: number;
  allowed: number;
  rate: number;
  burst: number;
  updated_at: number;
}

/** A secret (migration 021): its value barrier-sealed to (secrets, id, value). */
export interface SecretTable {
  id: string;
  organization_id: string;
  /** Unique within the organization when given. */
  name: string | null;
  value: string;
  /** JSON list of {key, value}: the static properties policies read. */
  static_properties: string;
  /** The user who imported it. */
  created_by: string;
  created_at: number;
}

/** A velocity control (migration 018): data source and aggregation as the JSON the client sent. */
export interface VelocityControlTable {
  id: string;
  organization_id: string;
  identifier: string;
  name: string;
  data_source: string;
  aggregation: string;
  created_at: number;
  updated_at: number;
}

/** One group of a control (the organization, a user, a wallet): the row a reservation locks. */
export interface VelocityGroupTable {
  control_id: string;
  group_key: string;
  organization_id: string;
}

/** What counted in one time bucket of a group: a decimal string of the amount × 10^18. */
export interface VelocityCountTable {
  control_id: string;
  group_key: string;
  bucket: number;
  amount: string;
}

/** A session profile (migration 020): immutable once created. */
export interface SessionProfileTable {
  id: string;
  organization_id: string;
  name: string;
  /** A policy-language condition every activity of a session made with the profile must meet. */
  scope: string;
  expiration_seconds: string | null;
  notes: string | null;
  created_at: number;
  updated_at: number;
}

/** A user's MFA policy (migration 019): steps of required methods as JSON (v1RequiredAuthenticationMethod[]). */
export interface MfaPolicyTable {
  id: string;
  organization_id: string;
  user_id: string;
  name: string;
  condition: string;
  required_methods: string;
  order_index: number;
  notes: string;
  created_at: number;
  updated_at: number;
}

/** The MFA policy an activity matched for one user, and the methods presented for it so far (JSON). */
export interface ActivityMfaTable {
  activity_id: string;
  user_id: string;
  organization_id: string;
  mfa_policy_id: string;
  required_methods: string;
  satisfied_methods: string;
  created_at: number;
  updated_at: number;
}

/** An invitation (migration 022): the accept token only as its SHA-256 hex. */
export interface InvitationTable {
  id: string;
  organization_id: string;
  receiver_user_name: string;
  receiver_email: string;
  /** JSON array of user tag ids. */
  receiver_user_tags: string;
  access_type: string;
  sender_user_id: string;
  /** v1InvitationStatus. */
  status: string;
  token_hash: string;
  expires_at: number;
  accepted_user_id: string | null;
  created_at: number;
  updated_at: number;
}

/** One thing the delivery layer did with an email (migration 022): never its text. */
export interface EmailEventTable {
  id: string;
  organization_id: string;
  message_id: string;
  /** Send, Delivery or Bounce (the swagger's v1EmailEvent names). */
  event_type: string;
  /** What the message was for: OTP, EMAIL_AUTH, EMAIL_RECOVERY, INVITATION. */
  message_kind: string;
  from_address: string;
  to_address: string;
  /** `to_address` lower-cased: what list_email_events matches. */
  recipient: string;
  /** JSON of v1EmailEventDetails. */
  details: string;
  timestamp: number;
  created_at: number;
}

/** A webhook endpoint (migration 023): subscriptions as JSON, with its delivery health. */
export interface WebhookEndpointTable {
  id: string;
  organization_id: string;
  name: string;
  url: string;
  /** 1 or 0. */
  is_active: number;
  subscriptions: string;
  created_at: number;
  updated_at: number;
  consecutive_failures: number;
  failing_since: number | null;
  last_error: string | null;
  last_delivered_at: number | null;
}

/** One event for one endpoint in the webhook outbox (migration 023). */
export interface WebhookDeliveryTable {
  id: string;
  endpoint_id: string;
  organization_id: string;
  event_organization_id: string;
  event_type: string;
  subject: string;
  sequence: number;
  payload: string;
  state: 'pending' | 'delivered' | 'dead';
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
  lease_owner: string | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

/** A broadcast transaction and where it stands (migration 024). Addresses lowercase 0x hex. */
export interface SendTransactionTable {
  id: string;
  organization_id: string;
  caip2: string;
  from_address: string;
  /** Null until known (a raw transaction's nonce is read from the node after the broadcast). */
  nonce: number | null;
  tx_hash: string;
  /** 0x hex of the signed transaction. */
  signed_transaction: string;
  status: string;
  /** v1TxError as JSON, once FAILED. */
  error: string | null;
  /** The fingerprint of the activity that sent it; unique per organization. */
  activity_fingerprint: string | null;
  created_at: number;
  updated_at: number;
  /** When the tracker last looked at it (0: never); migration 027. */
  checked_at: number;
  /** `sigil` (built and signed by Sigil) or `raw` (eth_send_raw_transaction); migration 027. */
  origin: string;
}

/** The next nonce Sigil hands out for one address on one chain: the row an allocation locks. */
export interface EvmNonceTable {
  caip2: string;
  address: string;
  next_nonce: number;
}

export interface OrganizationKeyTable {
  organization_id: string;
  key_id: string;
  wrapped_key: string;
  created_at: number;
}
