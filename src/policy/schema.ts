// Type descriptors of every keyword and struct the policy language can read (docs/reference/policies.md
// docs/reference/policies.md "Keywords"; docs/reference/policies.md), and which
// keywords each policy field may use.
//
// Each descriptor is declared with `struct<Interface>(…)`, so the TypeScript compiler rejects a
// descriptor that lists a field the context.ts interface lacks, misses one it has, marks optionality
// differently or gives it another type. The checker uses these to reject typos (`eth.tx.too`) and
// type errors (`eth.tx.value == 'abc'`) when a policy is created, instead of letting them become an
// `OUTCOME_ERROR` on every request.
//
// `CI_STRING` marks the fields docs/reference/policies.md "The language" lists as engine-normalized: `eth.tx.to`,
// `eth.tx.from`, `eth.eip_712.domain.verifying_contract`, `tempo.tx.from`, `tempo.tx.fee_token`,
// `tempo.tx.calls[].to`, `tempo.tx.calls[].input`, `bitcoin.tx.outputs[].address_type`. Values read
// from them compare ignoring case, so the checksummed literals of the docs (P70, P75, P113) match
// whatever casing the transaction used. `wallet_account.address` stays exact, as documented.
// Address-typed ABI arguments and EIP-712 address/bytes values are dynamic data: the pipeline marks
// those with `caseInsensitive()` (values.ts) because only it knows the ABI / EIP-712 types.

import type * as C from './context.js';
import type { ExpressionKind } from './errors.js';
import type { StructType } from './types.js';
import { BOOL, CI_STRING, DYN, INT, STRING, TIMESTAMP, listOf, mapOf, optional, required, struct } from './types.js';

// ---------------------------------------------------------------- consensus

export const USER = struct<C.User>('User', {
  id: required(STRING),
  tags: required(listOf(STRING)),
  email: required(STRING),
  alias: required(STRING),
});

export const CREDENTIAL = struct<C.Credential>('Credential', {
  id: required(STRING),
  user_id: required(STRING),
  type: required(STRING),
  credential_id: optional(STRING),
  public_key: required(STRING),
});

// ---------------------------------------------------------------- Spark

const SPARK_KEY_DERIVATION = struct<C.SparkKeyDerivation>('SparkKeyDerivation', {
  type: required(STRING),
  signing_leaf: required(struct<C.SparkSigningLeafDerivation>('SparkSigningLeafDerivation', { leaf_id: required(STRING) })),
  static_deposit: required(struct<C.SparkStaticDepositDerivation>('SparkStaticDepositDerivation', { index: required(INT) })),
});

const SPARK_OPERATOR_RECIPIENT = struct<C.SparkOperatorRecipient>('SparkOperatorRecipient', {
  operator_id: required(STRING),
  encryption_public_key: required(STRING),
});

const SPARK_SIGNATURE_REQUEST = struct<C.SparkSignatureRequest>('SparkSignatureRequest', {
  derivation: required(SPARK_KEY_DERIVATION),
  message: required(STRING),
  verifying_key: required(STRING),
  operator_commitments: required(
    listOf(
      struct<C.SparkFrostCommitment>('SparkFrostCommitment', {
        id: required(STRING),
        hiding: required(STRING),
        binding: required(STRING),
      }),
    ),
  ),
  adaptor_public_key: required(STRING),
});

const SPARK_TRANSFER_PACKAGE = struct<C.SparkTransferPackage>('SparkTransferPackage', {
  transfer_id: required(STRING),
  leaves: required(
    listOf(
      struct<C.SparkTransferLeaf>('SparkTransferLeaf', {
        leaf_id: required(STRING),
        old_leaf_derivation: required(SPARK_KEY_DERIVATION),
        new_leaf_derivation: required(SPARK_KEY_DERIVATION),
        refund_signature: required(STRING),
        direct_refund_signature: required(STRING),
        direct_from_cpfp_refund_signature: required(STRING),
      }),
    ),
  ),
  threshold: required(INT),
  operator_recipients: required(listOf(SPARK_OPERATOR_RECIPIENT)),
  receiver_public_key: required(STRING),
});

const SPARK_CLAIM_PACKAGE = struct<C.SparkClaimPackage>('SparkClaimPackage', {
  leaves: required(
    listOf(
      struct<C.SparkClaimLeaf>('SparkClaimLeaf', {
        leaf_id: required(STRING),
        ciphertext: required(STRING),
        sender_signature: required(STRING),
      }),
    ),
  ),
  threshold: required(INT),
  operator_recipients: required(listOf(SPARK_OPERATOR_RECIPIENT)),
  transfer_id: required(STRING),
  sender_identity_public_key: required(STRING),
});

const SPARK_LIGHTNING_RECEIVE_PACKAGE = struct<C.SparkLightningReceivePackage>('SparkLightningReceivePackage', {
  threshold: required(INT),
  operator_recipients: required(listOf(SPARK_OPERATOR_RECIPIENT)),
});

// ---------------------------------------------------------------- activity

export const ACTIVITY_PARAMS = struct<C.ActivityParams>('ActivityParams', {
  hash_function: optional(STRING),
  encoding: optional(STRING),
  type: optional(STRING),
  user_ids: optional(listOf(STRING)),
  user_id: optional(STRING),
  api_key_ids: optional(listOf(STRING)),
  target_public_key: optional(STRING),
  wallet_id: optional(STRING),
  otp_length: optional(INT),
  session_profile_id: optional(STRING),
  endpoint_id: optional(STRING),
  sign_with: optional(STRING),
  signatures: optional(listOf(SPARK_SIGNATURE_REQUEST)),
  transfer: optional(SPARK_TRANSFER_PACKAGE),
  claim: optional(SPARK_CLAIM_PACKAGE),
  lightning_receive: optional(SPARK_LIGHTNING_RECEIVE_PACKAGE),
});

export const ACTIVITY = struct<C.Activity>('Activity', {
  type: required(STRING),
  kind: required(STRING),
  resource: required(STRING),
  action: required(STRING),
  params: required(ACTIVITY_PARAMS),
});

// ---------------------------------------------------------------- signing targets

export const WALLET = struct<C.Wallet>('Wallet', {
  id: required(STRING),
  imported: required(BOOL),
  exported: required(BOOL),
  label: required(STRING),
});

export const WALLET_ACCOUNT = struct<C.WalletAccount>('WalletAccount', {
  address: required(STRING),
  path: optional(STRING),
  path_indexes: optional(listOf(INT)),
  path_hardened: optional(listOf(BOOL)),
  wallet_id: optional(STRING),
  curve: optional(STRING),
  address_format: optional(STRING),
});

export const PRIVATE_KEY = struct<C.PrivateKey>('PrivateKey', {
  id: required(STRING),
  tags: required(listOf(STRING)),
  imported: required(BOOL),
  exported: required(BOOL),
  label: required(STRING),
});

export const SECRET = struct<C.Secret>('Secret', {
  id: required(STRING),
  name: required(STRING),
  static_properties: required(mapOf(STRING)),
});

// ---------------------------------------------------------------- Ethereum

export const ETHEREUM_TRANSACTION = struct<C.EthereumTransaction>('EthereumTransaction', {
  from: required(CI_STRING),
  to: required(CI_STRING),
  data: required(STRING),
  value: required(INT),
  gas: required(INT),
  gas_price: required(INT),
  chain_id: required(INT),
  nonce: required(INT),
  max_fee_per_gas: optional(INT),
  max_priority_fee_per_gas: optional(INT),
  max_fee_per_blob_gas: optional(INT),
  type: required(STRING),
  function_name: optional(STRING),
  function_signature: optional(STRING),
  contract_call_args: optional(mapOf(DYN)),
});

export const EIP712_TYPED_DATA = struct<C.Eip712TypedData>('Eip712TypedData', {
  primary_type: required(STRING),
  domain: required(
    struct<C.Eip712Domain>('Eip712Domain', {
      name: required(STRING),
      version: required(STRING),
      chain_id: optional(INT),
      verifying_contract: required(CI_STRING),
    }),
  ),
  message: required(mapOf(DYN)),
});

export const EIP7702_AUTHORIZATION = struct<C.Eip7702Authorization>('Eip7702Authorization', {
  address: required(STRING),
  chain_id: required(INT),
  nonce: required(INT),
});

// ---------------------------------------------------------------- Solana

const ADDRESS_TABLE_LOOKUP_REFERENCE = struct<C.AddressTableLookupReference>('AddressTableLookupReference', {
  address_table_key: required(STRING),
  index: required(INT),
  writable: required(BOOL),
});

const SOLANA_INSTRUCTION = struct<C.SolanaInstruction>('Instruction', {
  program_key: required(STRING),
  accounts: required(
    listOf(
      struct<C.SolanaAccount>('Account', {
        account_key: required(STRING),
        signer: required(BOOL),
        writable: required(BOOL),
      }),
    ),
  ),
  instruction_data_hex: required(STRING),
  address_table_lookups: required(listOf(ADDRESS_TABLE_LOOKUP_REFERENCE)),
  parsed_instruction_data: optional(
    struct<C.SolanaParsedInstructionData>('SolanaParsedInstructionData', {
      instruction_name: required(STRING),
      discriminator: required(STRING),
      named_accounts: required(mapOf(STRING)),
      program_call_args: required(mapOf(DYN)),
    }),
  ),
});

export const SOLANA_TRANSACTION = struct<C.SolanaTransaction>('SolanaTransaction', {
  account_keys: required(listOf(STRING)),
  static_account_keys: required(listOf(STRING)),
  program_keys: required(listOf(STRING)),
  top_level_program_keys: required(listOf(STRING)),
  instructions: required(listOf(SOLANA_INSTRUCTION)),
  top_level_instructions: required(listOf(SOLANA_INSTRUCTION)),
  transfers: required(
    listOf(
      struct<C.SolanaTransfer>('Transfer', {
        from: required(STRING),
        to: required(STRING),
        amount: required(INT),
      }),
    ),
  ),
  recent_blockhash: required(STRING),
  spl_transfers: required(
    listOf(
      struct<C.SolanaSplTransfer>('SPLTransfer', {
        from: required(STRING),
        to: required(STRING),
        amount: required(INT),
        owner: required(STRING),
        signers: required(listOf(STRING)),
        token_mint: required(STRING),
      }),
    ),
  ),
  address_table_lookups: required(
    listOf(
      struct<C.AddressTableLookup>('AddressTableLookup', {
        address_table_key: required(STRING),
        writable_indexes: required(listOf(INT)),
        readonly_indexes: required(listOf(INT)),
      }),
    ),
  ),
  address_table_lookup_references: required(listOf(ADDRESS_TABLE_LOOKUP_REFERENCE)),
});

// ---------------------------------------------------------------- Tron

const TRON_PERMISSION = struct<C.TronPermission>('TronPermission', {
  type: required(STRING),
  id: required(INT),
  permission_name: required(STRING),
  threshold: required(INT),
  parent_id: required(INT),
  operations: required(STRING),
  keys: required(listOf(struct<C.TronKey>('TronKey', { address: required(STRING), weight: required(INT) }))),
});

export const TRON_TRANSACTION = struct<C.TronTransaction>('TronTransaction', {
  ref_block_bytes: required(STRING),
  ref_block_hash: required(STRING),
  expiration: required(INT),
  timestamp: required(INT),
  data: required(STRING),
  fee_limit: required(INT),
  contract: required(
    listOf(
      struct<C.TronContract>('TronContract', {
        type: required(STRING),
        permission_id: required(INT),
        owner_address: required(STRING),
        to_address: optional(STRING),
        amount: optional(INT),
        contract_address: optional(STRING),
        call_value: optional(INT),
        data: optional(STRING),
        call_token_value: optional(INT),
        token_id: optional(INT),
        resource: optional(STRING),
        balance: optional(INT),
        receiver_address: optional(STRING),
        lock: optional(BOOL),
        lock_period: optional(INT),
        frozen_balance: optional(INT),
        unfreeze_balance: optional(INT),
        owner: optional(TRON_PERMISSION),
        witness: optional(TRON_PERMISSION),
        actives: optional(listOf(TRON_PERMISSION)),
      }),
    ),
  ),
});

// ---------------------------------------------------------------- Bitcoin

export const BITCOIN_TRANSACTION = struct<C.BitcoinTransaction>('BitcoinTransaction', {
  version: required(STRING),
  inputs: required(
    listOf(
      struct<C.BitcoinTxInput>('BitcoinTxInput', {
        tx_id: required(STRING),
        vout: required(INT),
        sequence: required(INT),
      }),
    ),
  ),
  outputs: required(
    listOf(
      struct<C.BitcoinTxOutput>('BitcoinTxOutput', {
        value: required(INT),
        script_pubkey: required(STRING),
        address: required(STRING),
        address_type: required(CI_STRING),
      }),
    ),
  ),
  locktime: required(struct<C.BitcoinTxLocktime>('BitcoinTxLocktime', { amount: required(INT), type: required(STRING) })),
  fee: required(INT),
});

// ---------------------------------------------------------------- Tempo

export const TEMPO_TRANSACTION = struct<C.TempoTransaction>('TempoTransaction', {
  chain_id: required(INT),
  from: required(CI_STRING),
  nonce: required(INT),
  gas_limit: required(INT),
  max_fee_per_gas: required(INT),
  max_priority_fee_per_gas: required(INT),
  fee_token: required(CI_STRING),
  valid_before: required(INT),
  valid_after: required(INT),
  calls: required(
    listOf(
      struct<C.TempoCall>('TempoCall', {
        to: required(CI_STRING),
        input: required(CI_STRING),
        function_signature: required(STRING),
      }),
    ),
  ),
});

// ---------------------------------------------------------------- simulation (a Sigil extension)

const SIMULATION_ASSET = struct<C.SimulationAsset>('SimulationAsset', {
  kind: required(STRING),
  contract: required(CI_STRING),
  symbol: required(STRING),
  decimals: optional(INT),
  token_id: required(STRING),
});

const SIMULATION_TRANSFER = struct<C.SimulationTransfer>('SimulationTransfer', {
  asset: required(SIMULATION_ASSET),
  from: required(CI_STRING),
  to: required(CI_STRING),
  amount: required(INT),
});

export const SIMULATION = struct<C.Simulation>('Simulation', {
  status: required(STRING),
  reason: required(STRING),
  network: required(STRING),
  block: required(INT),
  reverted: required(BOOL),
  revert_reason: required(STRING),
  outflows: required(listOf(SIMULATION_TRANSFER)),
  transfers: required(listOf(SIMULATION_TRANSFER)),
  approvals: required(
    listOf(
      struct<C.SimulationApproval>('SimulationApproval', {
        asset: required(SIMULATION_ASSET),
        owner: required(CI_STRING),
        spender: required(CI_STRING),
        amount: required(INT),
        unlimited: required(BOOL),
        revoked: required(BOOL),
        via: required(STRING),
      }),
    ),
  ),
  balance_changes: required(
    listOf(struct<C.SimulationBalanceChange>('SimulationBalanceChange', { address: required(CI_STRING), asset: required(SIMULATION_ASSET), delta: required(INT) })),
  ),
  deployments: required(listOf(CI_STRING)),
  delegations: required(listOf(struct<C.SimulationDelegation>('SimulationDelegation', { authority: required(CI_STRING), delegate: required(CI_STRING) }))),
});

// ---------------------------------------------------------------- the root

/**
 * The whole context. Top-level keywords and the `eth.*`/`solana.tx`/… sub-keywords are all
 * optional: an activity populates only those that describe it.
 */
export const POLICY_CONTEXT = struct<C.PolicyContext>('PolicyContext', {
  approvers: optional(listOf(USER)),
  credentials: optional(listOf(CREDENTIAL)),
  activity: optional(ACTIVITY),
  eth: optional(
    struct<C.EthKeywords>('eth', {
      tx: optional(ETHEREUM_TRANSACTION),
      eip_712: optional(EIP712_TYPED_DATA),
      eip_7702_authorization: optional(EIP7702_AUTHORIZATION),
    }),
  ),
  solana: optional(struct<C.SolanaKeywords>('solana', { tx: optional(SOLANA_TRANSACTION) })),
  tron: optional(struct<C.TronKeywords>('tron', { tx: optional(TRON_TRANSACTION) })),
  bitcoin: optional(struct<C.BitcoinKeywords>('bitcoin', { tx: optional(BITCOIN_TRANSACTION) })),
  tempo: optional(struct<C.TempoKeywords>('tempo', { tx: optional(TEMPO_TRANSACTION) })),
  wallet: optional(WALLET),
  wallets: optional(listOf(WALLET)),
  private_key: optional(PRIVATE_KEY),
  wallet_account: optional(WALLET_ACCOUNT),
  secret: optional(SECRET),
  time: optional(struct<C.TimeKeywords>('time', { now: required(TIMESTAMP) })),
  simulation: optional(SIMULATION),
  // Read only as `controls.<identifier>` (checker.ts), each a bool.
  controls: optional(mapOf(BOOL)),
});

type Keyword = keyof C.PolicyContext;

/**
 * Keywords per policy field (docs/reference/policies.md "Keywords"). The `time` field and `CronSpan` are the Early Access
 * time-based policies; session-profile scopes and MFA conditions are compiled as `condition`.
 */
export const KEYWORDS_BY_KIND: Readonly<Record<ExpressionKind, readonly Keyword[]>> = Object.freeze({
  consensus: Object.freeze<Keyword[]>(['approvers', 'credentials', 'controls']),
  condition: Object.freeze<Keyword[]>(['activity', 'eth', 'solana', 'tron', 'bitcoin', 'tempo', 'wallet', 'wallets', 'private_key', 'wallet_account', 'secret', 'controls', 'simulation']),
  time: Object.freeze<Keyword[]>(['time']),
});

/** The kind whose field may use `keyword`, for "did you mean the consensus field?" messages. */
export function kindOfKeyword(keyword: string): ExpressionKind | undefined {
  for (const kind of Object.keys(KEYWORDS_BY_KIND) as ExpressionKind[]) {
    if ((KEYWORDS_BY_KIND[kind] as readonly string[]).includes(keyword)) return kind;
  }
  return undefined;
}

export const ROOT: StructType = POLICY_CONTEXT;
