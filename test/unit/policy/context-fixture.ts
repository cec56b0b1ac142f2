// A complete evaluation context: every keyword and every field of docs/reference/policies.md "Keywords"
// populated, including the optional ones. Doubles as an example for whoever builds contexts in
// the activity pipeline. Real requests populate only the keywords that describe them.
import type { PolicyContext, SparkKeyDerivation, SparkOperatorRecipient, TronPermission } from '../../../src/policy/index.js';
import { caseInsensitive } from '../../../src/policy/index.js';

const derivation: SparkKeyDerivation = { type: 'signing_leaf', signing_leaf: { leaf_id: 'leaf-1' }, static_deposit: { index: 0 } };
const recipient: SparkOperatorRecipient = { operator_id: '01', encryption_public_key: '02aa' };
const permission: TronPermission = { type: 'Active', id: 2, permission_name: 'active', threshold: 1, parent_id: 0, operations: '7fff1fc0033e0000000000000000000000000000000000000000000000000000', keys: [{ address: 'TQ6pM81JDC2GhrUoNYtZGvPc7SvyqcemEu', weight: 1 }] };
const lookupRef = { address_table_key: 'Table1111111111111111111111111111111111111', index: 3, writable: true };
const instruction = {
  program_key: '11111111111111111111111111111111',
  accounts: [{ account_key: 'Acc11111111111111111111111111111111111111', signer: true, writable: true }],
  instruction_data_hex: '020000008096980000000000',
  address_table_lookups: [lookupRef],
  parsed_instruction_data: { instruction_name: 'transfer', discriminator: '02000000', named_accounts: { k: 'Acc11111111111111111111111111111111111111' }, program_call_args: { k: 10000000 } },
};

export const FULL_CONTEXT: PolicyContext = {
  approvers: [{ id: 'user-1', tags: ['tag-1'], email: 'a@example.com', alias: 'alice' }],
  credentials: [{ id: 'cred-1', user_id: 'user-1', type: 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR', credential_id: 'AQID', public_key: '02bb' }],
  activity: {
    type: 'ACTIVITY_TYPE_SPARK_PREPARE_TRANSFER',
    kind: 'SPARK_PREPARE_TRANSFER',
    resource: 'PRIVATE_KEY',
    action: 'SIGN',
    // Every params entry at once: no real activity exposes all of them.
    params: {
      hash_function: 'HASH_FUNCTION_NO_OP',
      encoding: 'PAYLOAD_ENCODING_EIP712',
      type: 'TRANSACTION_TYPE_ETHEREUM',
      user_ids: ['user-2'],
      user_id: 'user-2',
      api_key_ids: ['key-1'],
      target_public_key: '04cc',
      wallet_id: 'wallet-1',
      otp_length: 6,
      session_profile_id: '',
      endpoint_id: 'endpoint-1',
      sign_with: 'sp1address',
      signatures: [{ derivation, message: 'aa', verifying_key: '02dd', operator_commitments: [{ id: '01', hiding: '02ee', binding: '02ff' }], adaptor_public_key: '' }],
      transfer: {
        transfer_id: 'transfer-1',
        leaves: [{ leaf_id: 'leaf-1', old_leaf_derivation: derivation, new_leaf_derivation: derivation, refund_signature: 'aa', direct_refund_signature: '', direct_from_cpfp_refund_signature: '' }],
        threshold: 2,
        operator_recipients: [recipient],
        receiver_public_key: '02aa',
      },
      claim: { leaves: [{ leaf_id: 'leaf-1', ciphertext: 'aa', sender_signature: 'bb' }], threshold: 2, operator_recipients: [recipient], transfer_id: 'transfer-1', sender_identity_public_key: '02ab' },
      lightning_receive: { threshold: 2, operator_recipients: [recipient] },
    },
  },
  eth: {
    tx: {
      from: '0x1111111111111111111111111111111111111111',
      to: '0x2222222222222222222222222222222222222222',
      data: '0xa9059cbb',
      value: 10n ** 18n,
      gas: 21000,
      gas_price: 30_000_000_000,
      chain_id: 1,
      nonce: 0,
      max_fee_per_gas: 30_000_000_000,
      max_priority_fee_per_gas: 1_000_000_000,
      max_fee_per_blob_gas: 1,
      type: 'TYPE_2',
      function_name: 'transfer',
      function_signature: '0xa9059cbb',
      contract_call_args: { k: caseInsensitive('0x3333333333333333333333333333333333333333') },
    },
    eip_712: {
      primary_type: 'Permit',
      domain: { name: 'USD Coin', version: '2', chain_id: 1, verifying_contract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' },
      message: { k: '1000000' },
    },
    eip_7702_authorization: { address: '0x4444444444444444444444444444444444444444', chain_id: 1, nonce: 0 },
  },
  solana: {
    tx: {
      account_keys: ['Acc11111111111111111111111111111111111111'],
      static_account_keys: ['Acc11111111111111111111111111111111111111'],
      program_keys: ['11111111111111111111111111111111'],
      top_level_program_keys: ['11111111111111111111111111111111'],
      instructions: [instruction],
      top_level_instructions: [instruction],
      transfers: [{ from: 'Acc11111111111111111111111111111111111111', to: 'ADDRESS_TABLE_LOOKUP', amount: 1 }],
      recent_blockhash: 'GHtXQBsoZHVnNFa9YevAzFr17DJjgHXk3ycTKD5xD3Zi',
      spl_transfers: [{ from: 'Src1', to: 'Dst1', amount: 5, owner: 'Own1', signers: ['Sig1'], token_mint: 'Mint1' }],
      address_table_lookups: [{ address_table_key: 'Table1111111111111111111111111111111111111', writable_indexes: [3], readonly_indexes: [7] }],
      address_table_lookup_references: [lookupRef],
    },
  },
  tron: {
    tx: {
      ref_block_bytes: '4c2a',
      ref_block_hash: '8f3c2e1d0b9a7f6e',
      expiration: 1767225660000,
      timestamp: 1767225600000,
      data: 'memo',
      fee_limit: 100000000,
      contract: [
        {
          type: 'AccountPermissionUpdateContract',
          permission_id: 0,
          owner_address: 'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9',
          to_address: 'TQ6pM81JDC2GhrUoNYtZGvPc7SvyqcemEu',
          amount: 1,
          contract_address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
          call_value: 0,
          data: 'a9059cbb',
          call_token_value: 0,
          token_id: 0,
          resource: 'ENERGY',
          balance: 1,
          receiver_address: 'TQ6pM81JDC2GhrUoNYtZGvPc7SvyqcemEu',
          lock: false,
          lock_period: 0,
          frozen_balance: 1,
          unfreeze_balance: 1,
          owner: { ...permission, type: 'Owner', id: 0 },
          witness: { ...permission, type: 'Witness', id: 1 },
          actives: [permission],
        },
      ],
    },
  },
  bitcoin: {
    tx: {
      version: '2',
      inputs: [{ tx_id: 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16', vout: 1, sequence: 4294967293 }],
      outputs: [{ value: 150000, script_pubkey: '0014751e76e8199196d454941c45d1b3a323f1433bd6', address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', address_type: 'p2wpkh' }],
      locktime: { amount: 0, type: 'Blocks' },
      fee: 4200,
    },
  },
  tempo: {
    tx: {
      chain_id: 42431,
      from: '0x5555555555555555555555555555555555555555',
      nonce: 1,
      gas_limit: 90000,
      max_fee_per_gas: 1,
      max_priority_fee_per_gas: 1,
      fee_token: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
      valid_before: 0,
      valid_after: 0,
      calls: [{ to: '0x40f008f4c17075EFcA092aE650655f6693AECEd0', input: '0xa9059cbb', function_signature: '0xa9059cbb' }],
    },
  },
  wallet: { id: 'wallet-1', imported: false, exported: false, label: 'main' },
  wallets: [{ id: 'wallet-1', imported: false, exported: false, label: 'main' }],
  private_key: { id: 'key-1', tags: ['tag-2'], imported: true, exported: false, label: 'legacy' },
  wallet_account: {
    address: '0x6666666666666666666666666666666666666666',
    path: "m/44'/60'/0'/0/0",
    path_indexes: [44, 60, 0, 0, 0],
    path_hardened: [true, true, true, false, false],
    wallet_id: 'wallet-1',
    curve: 'CURVE_SECP256K1',
    address_format: 'ADDRESS_FORMAT_ETHEREUM',
  },
  secret: { id: '9a1f0c2e-0000-7000-8000-000000000001', name: 'card', static_properties: { k: 'creditCard' } },
  time: { now: new Date('2026-03-10T14:00:00Z') },
  controls: { k: true },
};
