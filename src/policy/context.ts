// The evaluation context: what the activity pipeline fills in for the policy language to read
// (docs/reference/policies.md "Keywords", docs/reference/policies.md).
//
// Field names are the policy language's names, verbatim (snake_case), so `eth.tx.chain_id` in a
// policy is `context.eth.tx.chain_id` here. Plain data only: no classes besides `Date` (and
// `Unavailable` for a velocity control that no longer exists), no functions. `schema.ts` describes the same shapes for the create-time checker and is type-checked
// against these interfaces, so the two cannot drift apart.
//
// How to fill it in (the rules the evaluator relies on):
// - Populate a keyword only when the activity carries that data (docs/reference/policies.md "Evaluation of one policy"):
//   `wallet`/`wallet_account`/`private_key` only for sign and export requests targeting them,
//   `eth.tx` only for Ethereum transaction signing, `eth.eip_712` only for EIP-712 payloads, and so
//   on. Leave the rest `undefined`. Reading an absent keyword or field is an evaluation error of
//   kind `missing` (Turnkey's `MissingField`), never `false` and never a match, so a policy about
//   Ethereum transactions can neither allow nor (see outcome.ts) deny a wallet creation.
// - Fields marked optional are absent when the reference service does not expose them for this
//   request (ABI-only fields without an uploaded ABI, per-contract Tron fields, `activity.params`
//   entries of other activity types). Required fields must always be present; use the documented
//   defaults (`''` for `eth.tx.to` on contract creation, `''`/`0` for inactive Spark variants).
// - Integers (`PolicyInt`) may be given as `bigint` or as a JS `number` that is a safe integer.
//   Use bigint for anything that can exceed 2^53 (wei amounts, u256 values). A non-integer or
//   unsafe number is an evaluation error of kind `type`, never a rounded value.
// - `DynamicValue` is untyped request data (ABI/IDL arguments, EIP-712 message values): strings,
//   integers, booleans, arrays and plain objects of those. EIP-712 integers arrive as decimal
//   strings from ethers/viem and compare as strings (`p['amount'] == '100000000'`).
// - Address casing (docs/reference/policies.md "The language"): pass strings as they are. The fixed fields the
//   reference engine compares case-insensitively (`eth.tx.to`/`from`, EIP-712
//   `verifying_contract`, Tempo `from`/`fee_token`/`calls[].to`/`calls[].input`, Bitcoin
//   `address_type`) are known to the schema and compared ignoring case by the language itself.
//   Inside `DynamicValue` data only the pipeline knows which values are addresses: wrap
//   address-typed ABI arguments and EIP-712 `address`/`bytes`/`bytesN` values with
//   `caseInsensitive(text)` (values.ts). Every other string compares exactly
//   (`wallet_account.address` is stored EIP-55 and compared as stored).

import type { Unavailable } from './values.js';

/** An integer of the policy language (i128 / u256 range). */
export type PolicyInt = bigint | number;

/**
 * Untyped request data: string (or `caseInsensitive(text)` for addresses), PolicyInt, boolean, and
 * arrays and plain objects of those.
 */
export type DynamicValue = unknown;

// ---------------------------------------------------------------- consensus keywords

/** An element of `approvers`: a user that approved the activity (the initiator included). */
export interface User {
  readonly id: string;
  /** User tag IDs. */
  readonly tags: readonly string[];
  readonly email: string;
  readonly alias: string;
}

/** An element of `credentials`: a credential used to approve the activity. */
export interface Credential {
  /** API key or authenticator ID. */
  readonly id: string;
  readonly user_id: string;
  /** `CREDENTIAL_TYPE_*`. */
  readonly type: string;
  /** Passkeys (authenticators) only. */
  readonly credential_id?: string;
  readonly public_key: string;
}

// ---------------------------------------------------------------- activity

/**
 * `activity.params`: only the entries the reference service exposes for the activity's type
 * (docs/reference/policies.md); every other entry stays absent.
 */
export interface ActivityParams {
  /** SIGN_RAW_PAYLOAD(_V2), SIGN_RAW_PAYLOADS: `HASH_FUNCTION_*`. */
  readonly hash_function?: string;
  /** SIGN_RAW_PAYLOAD(_V2), SIGN_RAW_PAYLOADS: `PAYLOAD_ENCODING_*`. */
  readonly encoding?: string;
  /** SIGN_TRANSACTION_V2: `TRANSACTION_TYPE_{ETHEREUM,SOLANA,BITCOIN,TRON,TEMPO}`. */
  readonly type?: string;
  /** DELETE_USERS. */
  readonly user_ids?: readonly string[];
  /** CREATE_API_KEYS(_V2), DELETE_API_KEYS. */
  readonly user_id?: string;
  /** DELETE_API_KEYS. */
  readonly api_key_ids?: readonly string[];
  /** EXPORT_WALLET, EXPORT_WALLET_ACCOUNT, EXPORT_PRIVATE_KEY. */
  readonly target_public_key?: string;
  /** UPDATE_WALLET. */
  readonly wallet_id?: string;
  /** INIT_OTP_AUTH_V2, INIT_OTP_AUTH_V3. */
  readonly otp_length?: PolicyInt;
  /** OTP_LOGIN(_V2), STAMP_LOGIN, OAUTH_LOGIN: `''` when omitted. */
  readonly session_profile_id?: string;
  /** UPDATE_WEBHOOK_ENDPOINT, DELETE_WEBHOOK_ENDPOINT. */
  readonly endpoint_id?: string;
  /** SPARK_SIGN_FROST, SPARK_PREPARE_TRANSFER, SPARK_CLAIM_TRANSFER, SPARK_PREPARE_LIGHTNING_RECEIVE. */
  readonly sign_with?: string;
  /** SPARK_SIGN_FROST. */
  readonly signatures?: readonly SparkSignatureRequest[];
  /** SPARK_PREPARE_TRANSFER. */
  readonly transfer?: SparkTransferPackage;
  /** SPARK_CLAIM_TRANSFER. */
  readonly claim?: SparkClaimPackage;
  /** SPARK_PREPARE_LIGHTNING_RECEIVE. */
  readonly lightning_receive?: SparkLightningReceivePackage;
}

export interface Activity {
  /** Exact versioned type, e.g. `ACTIVITY_TYPE_SIGN_TRANSACTION_V2`. */
  readonly type: string;
  /** Version-agnostic kind: the type without `ACTIVITY_TYPE_` and a trailing `_V<n>`. */
  readonly kind: string;
  /** `WALLET`, `PRIVATE_KEY`, `USER`, … */
  readonly resource: string;
  /** `CREATE`, `UPDATE`, `DELETE`, `SIGN`, `EXPORT`, `IMPORT`, `VERIFY`, `ENCRYPT`. */
  readonly action: string;
  readonly params: ActivityParams;
}

// ---------------------------------------------------------------- Spark (activity.params only)

export interface SparkSigningLeafDerivation {
  /** `''` when the `signing_leaf` variant is not active. */
  readonly leaf_id: string;
}

export interface SparkStaticDepositDerivation {
  /** `0` when the `static_deposit` variant is not active. */
  readonly index: PolicyInt;
}

export interface SparkKeyDerivation {
  /** `identity`, `signing_leaf`, `deposit`, `static_deposit`, `htlc_preimage`, or `''` when unset. */
  readonly type: string;
  readonly signing_leaf: SparkSigningLeafDerivation;
  readonly static_deposit: SparkStaticDepositDerivation;
}

export interface SparkFrostCommitment {
  readonly id: string;
  readonly hiding: string;
  readonly binding: string;
}

export interface SparkSignatureRequest {
  readonly derivation: SparkKeyDerivation;
  readonly message: string;
  readonly verifying_key: string;
  readonly operator_commitments: readonly SparkFrostCommitment[];
  /** `''` when omitted. */
  readonly adaptor_public_key: string;
}

export interface SparkTransferLeaf {
  readonly leaf_id: string;
  readonly old_leaf_derivation: SparkKeyDerivation;
  readonly new_leaf_derivation: SparkKeyDerivation;
  /** `''` when omitted (all three signatures). */
  readonly refund_signature: string;
  readonly direct_refund_signature: string;
  readonly direct_from_cpfp_refund_signature: string;
}

export interface SparkOperatorRecipient {
  readonly operator_id: string;
  readonly encryption_public_key: string;
}

export interface SparkTransferPackage {
  readonly transfer_id: string;
  readonly leaves: readonly SparkTransferLeaf[];
  readonly threshold: PolicyInt;
  readonly operator_recipients: readonly SparkOperatorRecipient[];
  readonly receiver_public_key: string;
}

export interface SparkClaimLeaf {
  readonly leaf_id: string;
  readonly ciphertext: string;
  readonly sender_signature: string;
}

export interface SparkClaimPackage {
  readonly leaves: readonly SparkClaimLeaf[];
  readonly threshold: PolicyInt;
  readonly operator_recipients: readonly SparkOperatorRecipient[];
  readonly transfer_id: string;
  readonly sender_identity_public_key: string;
}

export interface SparkLightningReceivePackage {
  readonly threshold: PolicyInt;
  readonly operator_recipients: readonly SparkOperatorRecipient[];
}

// ---------------------------------------------------------------- signing targets

export interface Wallet {
  readonly id: string;
  readonly imported: boolean;
  readonly exported: boolean;
  readonly label: string;
}

/**
 * `address` always. The other fields are populated only for EXPORT_WALLET_ACCOUNT
 * (`[branch: andrew/export-path-policy-docs]`); elsewhere they stay absent (`MissingField`).
 */
export interface WalletAccount {
  /** Stored casing (EIP-55 for EVM); compared exactly. */
  readonly address: string;
  readonly path?: string;
  /** Path indexes with the hardened bit stripped. */
  readonly path_indexes?: readonly PolicyInt[];
  readonly path_hardened?: readonly boolean[];
  readonly wallet_id?: string;
  readonly curve?: string;
  readonly address_format?: string;
}

export interface PrivateKey {
  readonly id: string;
  /** Private key tag IDs. */
  readonly tags: readonly string[];
  readonly imported: boolean;
  readonly exported: boolean;
  readonly label: string;
}

/**
 * `secret` for ACTIVITY_TYPE_EXPORT_SECRETS (docs/reference/bundles.md "Secrets") and ACTIVITY_TYPE_DELETE_SECRETS,
 * once per secret. `id` and `name` ('' when unnamed) are Sigil's, so a policy can name one secret.
 */
export interface Secret {
  readonly id: string;
  readonly name: string;
  readonly static_properties: Readonly<Record<string, string>>;
}

// ---------------------------------------------------------------- Ethereum

export interface EthereumTransaction {
  readonly from: string;
  /** `''` for contract creation. */
  readonly to: string;
  /** `0x`-prefixed hex calldata (`'0x'` when empty). */
  readonly data: string;
  /** Wei. */
  readonly value: PolicyInt;
  readonly gas: PolicyInt;
  /** For EIP-1559 transactions: the same value as `max_fee_per_gas`. */
  readonly gas_price: PolicyInt;
  readonly chain_id: PolicyInt;
  readonly nonce: PolicyInt;
  /** EIP-1559 and later. */
  readonly max_fee_per_gas?: PolicyInt;
  /** EIP-1559 and later. */
  readonly max_priority_fee_per_gas?: PolicyInt;
  /** EIP-4844. */
  readonly max_fee_per_blob_gas?: PolicyInt;
  /** `LEGACY`, `TYPE_1`, `TYPE_2`, `TYPE_3`, `TYPE_4`. */
  readonly type: string;
  /** Only when an ABI is uploaded for `to`. */
  readonly function_name?: string;
  /** `'0x'` + 4-byte selector; only when an ABI is uploaded for `to`. */
  readonly function_signature?: string;
  /** Argument name → ContractArgument; tuple arrays are positional lists. Only with an ABI. */
  readonly contract_call_args?: Readonly<Record<string, DynamicValue>>;
}

export interface Eip712Domain {
  /** `''` when the domain has no name (likewise `version`, `verifying_contract`). */
  readonly name: string;
  readonly version: string;
  /** Absent when the domain has no chainId. */
  readonly chain_id?: PolicyInt;
  readonly verifying_contract: string;
}

export interface Eip712TypedData {
  readonly primary_type: string;
  readonly domain: Eip712Domain;
  /** The message JSON as signed (integers typically decimal strings). */
  readonly message: Readonly<Record<string, DynamicValue>>;
}

export interface Eip7702Authorization {
  readonly address: string;
  readonly chain_id: PolicyInt;
  readonly nonce: PolicyInt;
}

export interface EthKeywords {
  readonly tx?: EthereumTransaction;
  readonly eip_712?: Eip712TypedData;
  readonly eip_7702_authorization?: Eip7702Authorization;
}

// ---------------------------------------------------------------- Solana

export interface SolanaAccount {
  readonly account_key: string;
  readonly signer: boolean;
  readonly writable: boolean;
}

export interface AddressTableLookup {
  readonly address_table_key: string;
  readonly writable_indexes: readonly PolicyInt[];
  readonly readonly_indexes: readonly PolicyInt[];
}

export interface AddressTableLookupReference {
  readonly address_table_key: string;
  readonly index: PolicyInt;
  readonly writable: boolean;
}

/** Only for instructions whose program has an uploaded IDL. */
export interface SolanaParsedInstructionData {
  readonly instruction_name: string;
  readonly discriminator: string;
  readonly named_accounts: Readonly<Record<string, string>>;
  readonly program_call_args: Readonly<Record<string, DynamicValue>>;
}

export interface SolanaInstruction {
  readonly program_key: string;
  readonly accounts: readonly SolanaAccount[];
  readonly instruction_data_hex: string;
  readonly address_table_lookups: readonly AddressTableLookupReference[];
  readonly parsed_instruction_data?: SolanaParsedInstructionData;
}

/** Native SOL transfer (top-level System Program instructions only). */
export interface SolanaTransfer {
  readonly from: string;
  readonly to: string;
  /** Lamports. */
  readonly amount: PolicyInt;
}

/** Top-level Token / Token-2022 `Transfer`, `TransferChecked`, `TransferCheckedWithFee`. */
export interface SolanaSplTransfer {
  readonly from: string;
  readonly to: string;
  /** Raw token units. */
  readonly amount: PolicyInt;
  readonly owner: string;
  readonly signers: readonly string[];
  /** `''` for a plain `Transfer`. */
  readonly token_mint: string;
}

/**
 * Addresses loaded from lookup tables appear as the literal `'ADDRESS_TABLE_LOOKUP'` in
 * `account_keys`, instruction accounts, `transfers` and `spl_transfers`.
 */
export interface SolanaTransaction {
  readonly account_keys: readonly string[];
  /** Same list as `account_keys`. */
  readonly static_account_keys: readonly string[];
  readonly program_keys: readonly string[];
  /** Same list as `program_keys`. */
  readonly top_level_program_keys: readonly string[];
  readonly instructions: readonly SolanaInstruction[];
  /** Same list as `instructions`. */
  readonly top_level_instructions: readonly SolanaInstruction[];
  readonly transfers: readonly SolanaTransfer[];
  readonly recent_blockhash: string;
  readonly spl_transfers: readonly SolanaSplTransfer[];
  readonly address_table_lookups: readonly AddressTableLookup[];
  readonly address_table_lookup_references: readonly AddressTableLookupReference[];
}

// ---------------------------------------------------------------- Tron

export interface TronKey {
  readonly address: string;
  readonly weight: PolicyInt;
}

export interface TronPermission {
  /** `Owner`, `Witness`, `Active`. */
  readonly type: string;
  readonly id: PolicyInt;
  readonly permission_name: string;
  readonly threshold: PolicyInt;
  readonly parent_id: PolicyInt;
  /** Hex, 32 bytes. */
  readonly operations: string;
  readonly keys: readonly TronKey[];
}

/** Fields other than `type`, `permission_id`, `owner_address` exist only for their contract type. */
export interface TronContract {
  readonly type: string;
  readonly permission_id: PolicyInt;
  readonly owner_address: string;
  readonly to_address?: string;
  /** Sun (TransferContract). */
  readonly amount?: PolicyInt;
  readonly contract_address?: string;
  readonly call_value?: PolicyInt;
  /** Selector and parameters, hex without `0x` (TriggerSmartContract). */
  readonly data?: string;
  readonly call_token_value?: PolicyInt;
  readonly token_id?: PolicyInt;
  /** `ENERGY` or `BANDWIDTH`. */
  readonly resource?: string;
  readonly balance?: PolicyInt;
  readonly receiver_address?: string;
  readonly lock?: boolean;
  readonly lock_period?: PolicyInt;
  readonly frozen_balance?: PolicyInt;
  readonly unfreeze_balance?: PolicyInt;
  readonly owner?: TronPermission;
  readonly witness?: TronPermission;
  readonly actives?: readonly TronPermission[];
}

export interface TronTransaction {
  readonly ref_block_bytes: string;
  readonly ref_block_hash: string;
  /** Milliseconds. */
  readonly expiration: PolicyInt;
  /** Milliseconds. */
  readonly timestamp: PolicyInt;
  /** The memo, not call data. */
  readonly data: string;
  readonly fee_limit: PolicyInt;
  readonly contract: readonly TronContract[];
}

// ---------------------------------------------------------------- Bitcoin

export interface BitcoinTxInput {
  readonly tx_id: string;
  readonly vout: PolicyInt;
  readonly sequence: PolicyInt;
}

export interface BitcoinTxOutput {
  /** Satoshis. */
  readonly value: PolicyInt;
  readonly script_pubkey: string;
  readonly address: string;
  readonly address_type: string;
}

export interface BitcoinTxLocktime {
  readonly amount: PolicyInt;
  /** `Seconds` or `Blocks`. */
  readonly type: string;
}

export interface BitcoinTransaction {
  readonly version: string;
  readonly inputs: readonly BitcoinTxInput[];
  readonly outputs: readonly BitcoinTxOutput[];
  readonly locktime: BitcoinTxLocktime;
  /** Σ inputs − Σ outputs, satoshis. */
  readonly fee: PolicyInt;
}

// ---------------------------------------------------------------- Tempo

export interface TempoCall {
  /** `''` for contract creation. */
  readonly to: string;
  /** Hex call data. */
  readonly input: string;
  /** `'0x'` + 4-byte selector, `''` when the input is absent or too short. */
  readonly function_signature: string;
}

export interface TempoTransaction {
  readonly chain_id: PolicyInt;
  readonly from: string;
  readonly nonce: PolicyInt;
  readonly gas_limit: PolicyInt;
  readonly max_fee_per_gas: PolicyInt;
  readonly max_priority_fee_per_gas: PolicyInt;
  readonly fee_token: string;
  /** `0` when unset. */
  readonly valid_before: PolicyInt;
  /** `0` when unset. */
  readonly valid_after: PolicyInt;
  readonly calls: readonly TempoCall[];
}

// ---------------------------------------------------------------- simulation (a Sigil extension)

/** An asset as a simulation names it. */
export interface SimulationAsset {
  /** `native`, `erc20`, `erc721`, `erc1155`, `spl`. */
  readonly kind: string;
  /** The token contract or mint; `''` for the native asset. */
  readonly contract: string;
  /** `''` when the chain did not answer one. */
  readonly symbol: string;
  /** Absent when the chain did not answer them. */
  readonly decimals?: PolicyInt;
  /** ERC-721 / ERC-1155 token id, decimal; `''` for fungible assets. */
  readonly token_id: string;
}

export interface SimulationTransfer {
  readonly asset: SimulationAsset;
  readonly from: string;
  readonly to: string;
  /** Base units. */
  readonly amount: PolicyInt;
}

export interface SimulationApproval {
  readonly asset: SimulationAsset;
  readonly owner: string;
  readonly spender: string;
  /** Base units; 2^256 − 1 when unlimited (the maximum allowance, or an approval for all). */
  readonly amount: PolicyInt;
  readonly unlimited: boolean;
  readonly revoked: boolean;
  /** `approve`, `permit`, `setApprovalForAll`, `delegate`. */
  readonly via: string;
}

export interface SimulationBalanceChange {
  readonly address: string;
  readonly asset: SimulationAsset;
  /** Signed base units: negative is an outflow. */
  readonly delta: PolicyInt;
}

export interface SimulationDelegation {
  readonly authority: string;
  readonly delegate: string;
}

/**
 * `simulation` (docs/policies.md "Simulation before approval"): what the transaction does when run
 * against the chain's latest state. `status` and `reason` are always readable; every other field
 * is readable only when `status` is `SIMULATED`, and reading it otherwise is an evaluation error
 * (values.ts `Unavailable`), so a policy on the simulation never passes without one.
 */
export interface Simulation {
  /** `SIMULATED`, `NOT_SIMULATED`, `FAILED`. */
  readonly status: string;
  readonly reason: string;
  readonly network: string;
  readonly block: PolicyInt;
  readonly reverted: boolean;
  readonly revert_reason: string;
  /** Transfers out of an address the organization holds. */
  readonly outflows: readonly SimulationTransfer[];
  readonly transfers: readonly SimulationTransfer[];
  readonly approvals: readonly SimulationApproval[];
  readonly balance_changes: readonly SimulationBalanceChange[];
  readonly deployments: readonly string[];
  readonly delegations: readonly SimulationDelegation[];
}

// ---------------------------------------------------------------- namespaces and the root

export interface SolanaKeywords {
  readonly tx?: SolanaTransaction;
}

export interface TronKeywords {
  readonly tx?: TronTransaction;
}

export interface BitcoinKeywords {
  readonly tx?: BitcoinTransaction;
}

export interface TempoKeywords {
  readonly tx?: TempoTransaction;
}

export interface TimeKeywords {
  /** Trusted server time, one value per request (docs/reference/policies.md "The language"). */
  readonly now: Date;
}

/**
 * Everything a policy expression can read. One object per evaluation; which keywords an
 * expression may name depends on its field (schema.ts `KEYWORDS_BY_KIND`):
 * - consensus: `approvers`, `credentials`
 * - condition (also session-profile scopes and MFA conditions): `activity`, `eth`, `solana`, `tron`,
 *   `bitcoin`, `tempo`, `wallet`, `wallets`, `private_key`, `wallet_account`, `secret`
 * - time: `time`
 */
export interface PolicyContext {
  readonly approvers?: readonly User[];
  readonly credentials?: readonly Credential[];

  readonly activity?: Activity;
  readonly eth?: EthKeywords;
  readonly solana?: SolanaKeywords;
  readonly tron?: TronKeywords;
  readonly bitcoin?: BitcoinKeywords;
  readonly tempo?: TempoKeywords;
  /** Target wallet of sign and export requests. */
  readonly wallet?: Wallet;
  /** Target wallets of requests involving several wallets. */
  readonly wallets?: readonly Wallet[];
  /** Target private key of sign and export requests. */
  readonly private_key?: PrivateKey;
  /** Target wallet account of sign and export requests. */
  readonly wallet_account?: WalletAccount;
  readonly secret?: Secret;

  readonly time?: TimeKeywords;

  /** The transaction's simulation, for signing activities of a transaction a simulator takes. */
  readonly simulation?: Simulation;

  /**
   * Velocity controls (docs/velocity-controls.md), by identifier: `controls.<identifier>` is true when the control's
   * aggregate, counting the activity being judged, satisfies its `operator threshold`. The pipeline
   * fills in every control the organization's policies read; a control of a group the activity has
   * no member of (a wallet control, an activity without a wallet) is absent, and one that no longer
   * exists is `Unavailable`.
   */
  readonly controls?: Controls;
}

/** `controls`: identifier → whether the control holds for the activity being judged. */
export interface Controls {
  readonly [identifier: string]: boolean | Unavailable;
}
