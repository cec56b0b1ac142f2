// Signing with stored keys (docs/reference/keys.md "Signing"):
// resolve `signWith` (wallet account address, private key address, or private key id), decode the
// payload per encoding, sign with the curve's scheme (ECDSA, Ed25519, BIP340 for Spark, BIP340 with
// the BIP341 tweak for P2TR), and sign whole transactions per chain. The key is unsealed from its own
// row the first time it signs (then kept imported); nothing is derived from the mnemonic per request.
import { toChecksumAddress } from '../../chains/addresses/ethereum.js';
import type { Curve } from '../../crypto/curves.js';
import {
  eip712PolicyFields,
  eip7702AuthorizationDigest,
  eip7702PolicyFields,
  hashTypedData,
  parseEip7702Authorization,
  parseTypedData,
} from '../../chains/ethereum/eip712.js';
import { caseInsensitive, type PolicyContext } from '../../policy/index.js';
import { signingKeyForSealed, type RawSignature, type SignatureScheme, type SigningKey } from '../../crypto/sign.js';
import { bytesToBigInt } from '../../crypto/bytes.js';
import { parseTransaction, type EthAuthorization, type TransactionType, type TxSigningKey } from '../../chains/transactions.js';
import { SigilError, invalid } from '../../errors/errors.js';
import type { Barrier, SealedLocation, SecretSealer } from '../../barrier/barrier.js';
import { openerFor } from './organization-keys.js';
import type { Repositories } from '../../store/index.js';
import { ACCOUNT_KEY_AT, PRIVATE_KEY_AT } from './key-material.js';

/**
 * A key that can sign, found by `signWith`. Its secret is unsealed only when `key` is first called
 * for this sealed copy; later signatures reuse the imported key (crypto/sign.ts signingKeyForSealed).
 */
export interface SigningTarget {
  kind: 'wallet_account' | 'private_key';
  id: string;
  curve: Curve;
  /** The address format signWith matched, when it was an address. */
  addressFormat?: string;
  address?: string;
  publicKey: Uint8Array;
  walletId?: string;
  key(): SigningKey;
}

/**
 * The signing key sealed as `sealed` at `at`, opened through the barrier on first use only; the cache
 * names the location unambiguously, so a ciphertext met at another location is opened (and refused) anew.
 */
function sealedKey(barrier: SecretSealer, curve: Curve, sealed: string, at: SealedLocation): () => SigningKey {
  return () => signingKeyForSealed(`${JSON.stringify([at.table, at.rowId, at.column])}${sealed}`, curve, () => barrier.open(sealed, at));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Spellings of `signWith` to look up, most likely first; computed lazily because hashing costs. */
function* addressCandidates(signWith: string): Generator<string> {
  yield signWith;
  // EVM addresses are often passed lowercased; stored addresses are EIP-55 checksummed.
  if (/^0x[0-9a-fA-F]{40}$/.test(signWith)) {
    const checksummed = toChecksumAddress(signWith.toLowerCase());
    if (checksummed !== signWith) yield checksummed;
  }
}

export async function resolveSigningTarget(
  repos: Repositories,
  barrier: Barrier,
  organizationId: string,
  signWith: string,
): Promise<SigningTarget> {
  if (signWith === '') throw invalid('signWith must name a wallet account address, a private key address or a private key id');
  for (const address of addressCandidates(signWith)) {
    const [account] = await repos.wallets.accountsByAddress(organizationId, address);
    if (account) {
      return {
        kind: 'wallet_account',
        id: account.id,
        curve: account.curve as Curve,
        addressFormat: account.address_format,
        address: account.address,
        publicKey: Buffer.from(account.public_key, 'hex'),
        walletId: account.wallet_id,
        key: sealedKey(await openerFor(barrier, repos, organizationId, [account.private_key]), account.curve as Curve, account.private_key, ACCOUNT_KEY_AT(account.id)),
      };
    }
    const [key] = await repos.privateKeys.findByAddress(organizationId, address);
    if (key) {
      const formats = await repos.privateKeys.addresses([key.id]);
      const matched = formats.find((f) => f.address === address);
      return {
        kind: 'private_key',
        id: key.id,
        curve: key.curve as Curve,
        addressFormat: matched?.address_format,
        address,
        publicKey: Buffer.from(key.public_key, 'hex'),
        key: sealedKey(await openerFor(barrier, repos, organizationId, [key.private_key]), key.curve as Curve, key.private_key, PRIVATE_KEY_AT(key.id)),
      };
    }
  }
  if (UUID.test(signWith)) {
    const key = await repos.privateKeys.get(organizationId, signWith.toLowerCase());
    if (key) {
      return {
        kind: 'private_key',
        id: key.id,
        curve: key.curve as Curve,
        publicKey: Buffer.from(key.public_key, 'hex'),
        key: sealedKey(await openerFor(barrier, repos, organizationId, [key.private_key]), key.curve as Curve, key.private_key, PRIVATE_KEY_AT(key.id)),
      };
    }
  }
  throw new SigilError('NOT_FOUND', `Could not find any resource to sign with: ${signWith.slice(0, 128)}`);
}

function schemeOf(target: SigningTarget): SignatureScheme {
  if (target.curve === 'CURVE_ED25519') return 'EDDSA';
  const f = target.addressFormat ?? '';
  if (/^ADDRESS_FORMAT_BITCOIN_[A-Z]+_P2TR$/.test(f)) return 'BIP340_TAPROOT';
  if (f.startsWith('ADDRESS_FORMAT_SPARK_')) return 'BIP340';
  return 'ECDSA';
}

const HEX = /^(0x)?([0-9a-fA-F]{2})*$/;

/** Decodes one payload to the bytes handed to the hash function (or, for EIP-712/7702, the digest). */
function decodePayload(payload: string, encoding: string, hashFunction: string, index: string): Uint8Array {
  switch (encoding) {
    case 'PAYLOAD_ENCODING_HEXADECIMAL':
      if (!HEX.test(payload)) throw invalid(`invalid payload${index}: PAYLOAD_ENCODING_HEXADECIMAL needs an even number of hex digits, optionally after 0x`);
      return Buffer.from(payload.replace(/^0x/, ''), 'hex');
    case 'PAYLOAD_ENCODING_TEXT_UTF8':
      return Buffer.from(payload, 'utf8');
    case 'PAYLOAD_ENCODING_EIP712':
      if (hashFunction !== 'HASH_FUNCTION_NO_OP') {
        throw invalid(`invalid hash function: PAYLOAD_ENCODING_EIP712 payloads are hashed by EIP-712 itself; use HASH_FUNCTION_NO_OP`);
      }
      return hashTypedData(parseTypedData(payload));
    case 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION':
      if (hashFunction !== 'HASH_FUNCTION_NO_OP') {
        throw invalid(`invalid hash function: PAYLOAD_ENCODING_EIP7702_AUTHORIZATION payloads are hashed by EIP-7702 itself; use HASH_FUNCTION_NO_OP`);
      }
      return eip7702AuthorizationDigest(parseEip7702Authorization(payload));
    default:
      throw invalid(`invalid payload encoding: ${encoding}`);
  }
}

export async function signRawPayloads(
  target: SigningTarget,
  p: { payloads: string[]; encoding: string; hashFunction: string },
): Promise<RawSignature[]> {
  if (p.payloads.length === 0) throw invalid('payloads must list at least one payload');
  if ((p.encoding === 'PAYLOAD_ENCODING_EIP712' || p.encoding === 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION') && target.curve !== 'CURVE_SECP256K1') {
    throw invalid(`invalid payload encoding: ${p.encoding} needs a CURVE_SECP256K1 key, ${target.address ?? target.id} is ${target.curve}`);
  }
  const many = p.payloads.length > 1;
  const messages = p.payloads.map((payload, i) => decodePayload(payload, p.encoding, p.hashFunction, many ? ` ${i}` : ''));
  const scheme = schemeOf(target);
  const key = target.key();
  return messages.map((m) => key.signPayload(m, p.hashFunction, scheme));
}

const TX_CURVE: Record<string, Curve> = {
  TRANSACTION_TYPE_ETHEREUM: 'CURVE_SECP256K1',
  TRANSACTION_TYPE_TRON: 'CURVE_SECP256K1',
  TRANSACTION_TYPE_BITCOIN: 'CURVE_SECP256K1',
  TRANSACTION_TYPE_SOLANA: 'CURVE_ED25519',
};

/** Parses `unsignedTransaction` as `type`; the parse also yields what a policy would see. */
export function parseForSigning(target: SigningTarget, type: string, unsignedTransaction: string) {
  const curve = TX_CURVE[type];
  if (curve && curve !== target.curve) {
    throw invalid(`${type} needs a ${curve} key; ${target.address ?? target.id} is ${target.curve}`);
  }
  return parseTransaction(type as TransactionType, unsignedTransaction, { signerAddress: target.address ?? '' });
}

export function signParsedTransaction(target: SigningTarget, parsed: ReturnType<typeof parseForSigning>): string {
  const signing = target.key();
  const key: TxSigningKey = { publicKey: target.publicKey };
  if (target.curve === 'CURVE_SECP256K1') {
    key.secp256k1 = (digest) => signing.signDigest(digest);
    key.schnorr = (digest, tweak) => signing.signSchnorr(digest, tweak ? { tapTweak: tweak } : {});
  } else if (target.curve === 'CURVE_ED25519') {
    key.ed25519 = (message) => signing.signMessage(message);
  }
  return parsed.sign(key);
}

/**
 * An EIP-7702 authorization signed by the target's own key (the digest sign_raw_payload signs for
 * PAYLOAD_ENCODING_EIP7702_AUTHORIZATION), as the tuple a set-code transaction carries.
 */
export function signEip7702Authorization(target: SigningTarget, auth: { chainId: bigint; address: string; nonce: bigint }): EthAuthorization {
  if (target.curve !== 'CURVE_SECP256K1') throw invalid(`an EIP-7702 authorization needs a CURVE_SECP256K1 key, ${target.address ?? target.id} is ${target.curve}`);
  const sig = target.key().signDigest(eip7702AuthorizationDigest({ ...auth, address: auth.address.toLowerCase() }));
  return { chainId: auth.chainId, address: auth.address.toLowerCase(), nonce: auth.nonce, yParity: BigInt(sig.recovery), r: bytesToBigInt(sig.r), s: bytesToBigInt(sig.s) };
}

/** The keywords a raw payload exposes to policies: EIP-712 typed data and EIP-7702 authorizations (docs/reference/api.md "Stamps"). */
export function payloadPolicyKeywords(encoding: string, payload: string): PolicyContext {
  if (encoding === 'PAYLOAD_ENCODING_EIP712') {
    return { eth: { eip_712: eip712PolicyFields(parseTypedData(payload), { markCaseInsensitive: caseInsensitive }) as never } };
  }
  if (encoding === 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION') {
    return { eth: { eip_7702_authorization: eip7702PolicyFields(parseEip7702Authorization(payload)) } };
  }
  return {};
}

/** The transaction keyword (`eth.tx`, `solana.tx`, `tron.tx`, `bitcoin.tx`) of a parsed transaction. */
export function transactionPolicyKeywords(parsed: ReturnType<typeof parseForSigning>): PolicyContext {
  const [chain] = parsed.policy.keyword.split('.');
  return { [chain]: { tx: parsed.policy.value } } as PolicyContext;
}
