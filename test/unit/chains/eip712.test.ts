// EIP-712 typed data and EIP-7702 authorizations (src/chains/ethereum/eip712.ts): digests against viem's
// hashTypedData / hashAuthorization and ethers' TypedDataEncoder.hash on payloads built exactly as
// @turnkey/viem (serializeTypedData) and @turnkey/ethers (JSON.stringify(getPayload)) build them, the
// real SDK signers run against a fake client that signs our digest, the policy views, and bad input.
import { describe, expect, it } from 'vitest';
import {
  createWalletClient,
  custom,
  getTypesForEIP712Domain,
  hashTypedData as viemHashTypedData,
  serializeTypedData,
  type TypedDataDefinition,
} from 'viem';
import { hashAuthorization } from 'viem/utils';
import { privateKeyToAccount } from 'viem/accounts';
import { TypedDataEncoder, Wallet } from 'ethers';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { createAccountWithAddress } from '@turnkey/viem';
import { TurnkeySigner } from '@turnkey/ethers';
import {
  eip712DomainSeparator,
  eip712EncodeType,
  eip712PolicyFields,
  eip7702AuthorizationDigest,
  eip7702PolicyFields,
  hashTypedData,
  parseEip7702Authorization,
  parseTypedData,
} from '../../../src/chains/ethereum/eip712.js';
import { CryptoInputError } from '../../../src/crypto/errors.js';
import type * as Policy from '../../../src/policy/context.js';

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex');

const PRIV = ('0x' + '11'.repeat(32)) as `0x${string}`;
const localAccount = privateKeyToAccount(PRIV);

type Field = { name: string; type: string };
interface Case {
  domain: Record<string, unknown>;
  types: Record<string, Field[]>;
  primaryType: string;
  message: Record<string, unknown>;
  /** ethers rejects recursive types and several primary-type candidates; skip it there. */
  viemOnly?: boolean;
}

const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
const PERMIT2 = '0x000000000022D473030F116dDEE9F6B43aC78BA3';
const SPENDER = '0x2222222222222222222222222222222222222222';

const CASES: Record<string, Case> = {
  // https://eips.ethereum.org/EIPS/eip-712 (assets/eip-712/Example.js)
  mail: {
    domain: { name: 'Ether Mail', version: '1', chainId: 1, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' },
    types: {
      Person: [
        { name: 'name', type: 'string' },
        { name: 'wallet', type: 'address' },
      ],
      Mail: [
        { name: 'from', type: 'Person' },
        { name: 'to', type: 'Person' },
        { name: 'contents', type: 'string' },
      ],
    },
    primaryType: 'Mail',
    message: {
      from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
      to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
      contents: 'Hello, Bob!',
    },
  },
  erc2612Permit: {
    domain: { name: 'USD Coin', version: '2', chainId: 1, verifyingContract: USDC },
    types: {
      Permit: [
        { name: 'owner', type: 'address' },
        { name: 'spender', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'nonce', type: 'uint256' },
        { name: 'deadline', type: 'uint256' },
      ],
    },
    primaryType: 'Permit',
    message: {
      owner: localAccount.address,
      spender: SPENDER,
      value: 100_000_000n,
      nonce: 0n,
      deadline: 2n ** 256n - 1n,
    },
  },
  permit2Batch: {
    domain: { name: 'Permit2', chainId: 1, verifyingContract: PERMIT2 },
    types: {
      PermitBatchTransferFrom: [
        { name: 'permitted', type: 'TokenPermissions[]' },
        { name: 'spender', type: 'address' },
        { name: 'nonce', type: 'uint256' },
        { name: 'deadline', type: 'uint256' },
      ],
      TokenPermissions: [
        { name: 'token', type: 'address' },
        { name: 'amount', type: 'uint256' },
      ],
    },
    primaryType: 'PermitBatchTransferFrom',
    message: {
      permitted: [
        { token: USDC, amount: 100_000_000n },
        { token: '0xdAC17F958D2ee523a2206206994597C13D831ec7', amount: 5n },
      ],
      spender: SPENDER,
      nonce: 7n,
      deadline: 1_900_000_000n,
    },
  },
  permit2Single: {
    domain: { name: 'Permit2', chainId: 8453, verifyingContract: PERMIT2 },
    types: {
      PermitSingle: [
        { name: 'details', type: 'PermitDetails' },
        { name: 'spender', type: 'address' },
        { name: 'sigDeadline', type: 'uint256' },
      ],
      PermitDetails: [
        { name: 'token', type: 'address' },
        { name: 'amount', type: 'uint160' },
        { name: 'expiration', type: 'uint48' },
        { name: 'nonce', type: 'uint48' },
      ],
    },
    primaryType: 'PermitSingle',
    message: {
      details: { token: USDC, amount: 2n ** 160n - 1n, expiration: 2n ** 48n - 1n, nonce: 3 },
      spender: SPENDER,
      sigDeadline: 1_700_000_000,
    },
  },
  nestedArrays: {
    domain: { name: 'Nested', version: '1', chainId: 5, verifyingContract: '0x1111111111111111111111111111111111111111' },
    types: {
      Group: [
        { name: 'name', type: 'string' },
        { name: 'members', type: 'Member[]' },
        { name: 'grid', type: 'Cell[2][]' },
        { name: 'matrix', type: 'uint8[][]' },
        { name: 'tags', type: 'string[3]' },
      ],
      Member: [
        { name: 'account', type: 'address' },
        { name: 'roles', type: 'bytes32[]' },
        { name: 'active', type: 'bool' },
        { name: 'cells', type: 'Cell[]' },
      ],
      Cell: [
        { name: 'x', type: 'int16' },
        { name: 'y', type: 'int16' },
      ],
    },
    primaryType: 'Group',
    message: {
      name: 'team',
      members: [
        { account: SPENDER, roles: ['0x' + 'aa'.repeat(32), '0x' + '00'.repeat(32)], active: true, cells: [{ x: -1, y: 2 }] },
        { account: USDC, roles: [], active: false, cells: [] },
      ],
      grid: [
        [
          { x: 1, y: -2 },
          { x: -32768, y: 32767 },
        ],
        [
          { x: 0, y: 0 },
          { x: 5, y: 6 },
        ],
      ],
      matrix: [[1, 2, 255], [], [0]],
      tags: ['a', '', 'ünïcødé ✓'],
    },
  },
  negativeInts: {
    domain: { name: 'Ints', version: '1', chainId: 1 },
    types: {
      Numbers: [
        { name: 'a', type: 'int8' },
        { name: 'b', type: 'int256' },
        { name: 'c', type: 'int64' },
        { name: 'd', type: 'int24' },
        { name: 'e', type: 'uint8' },
        { name: 'f', type: 'int256[]' },
        { name: 'g', type: 'int128' },
      ],
    },
    primaryType: 'Numbers',
    message: {
      a: -128,
      b: -(2n ** 255n),
      c: -1n,
      d: -8388608,
      e: 255,
      f: [-1n, 0n, 1n, 2n ** 255n - 1n],
      g: -123456789012345678901234567890n,
    },
  },
  bytes: {
    domain: { name: 'Bytes', version: '1', chainId: 1, verifyingContract: USDC },
    types: {
      Blob: [
        { name: 'data', type: 'bytes' },
        { name: 'empty', type: 'bytes' },
        { name: 'b1', type: 'bytes1' },
        { name: 'b32', type: 'bytes32' },
        { name: 'list', type: 'bytes[]' },
        { name: 'selectors', type: 'bytes4[2]' },
        { name: 'ok', type: 'bool' },
      ],
    },
    primaryType: 'Blob',
    message: {
      data: '0xdeadbeef00' + '12'.repeat(100),
      empty: '0x',
      b1: '0xff',
      b32: '0x' + 'AB'.repeat(32),
      list: ['0x01', '0x', '0x' + 'cd'.repeat(40)],
      selectors: ['0xa9059cbb', '0x095ea7b3'],
      ok: true,
    },
  },
  domainWithSalt: {
    domain: {
      name: 'Salty',
      version: '3',
      chainId: 137,
      verifyingContract: '0x1111111111111111111111111111111111111111',
      salt: '0x' + 'ab'.repeat(32),
    },
    types: { Ping: [{ name: 'n', type: 'uint256' }] },
    primaryType: 'Ping',
    message: { n: 1n },
  },
  partialDomain: {
    domain: { chainId: 10, salt: '0x' + '01'.repeat(32) },
    types: { Ping: [{ name: 'n', type: 'uint256' }] },
    primaryType: 'Ping',
    message: { n: 42 },
  },
  hyperliquidApproveAgent: {
    domain: { name: 'HyperliquidSignTransaction', version: '1', chainId: 42161, verifyingContract: '0x0000000000000000000000000000000000000000' },
    types: {
      'HyperliquidTransaction:ApproveAgent': [
        { name: 'hyperliquidChain', type: 'string' },
        { name: 'agentAddress', type: 'address' },
        { name: 'agentName', type: 'string' },
        { name: 'nonce', type: 'uint64' },
      ],
    },
    primaryType: 'HyperliquidTransaction:ApproveAgent',
    message: { hyperliquidChain: 'Mainnet', agentAddress: SPENDER, agentName: 'bot', nonce: 1_700_000_000_123n },
  },
  recursive: {
    viemOnly: true,
    domain: { name: 'Tree', version: '1', chainId: 1 },
    types: {
      Node: [
        { name: 'label', type: 'string' },
        { name: 'children', type: 'Node[]' },
        { name: 'owner', type: 'Owner' },
      ],
      Owner: [{ name: 'who', type: 'address' }],
    },
    primaryType: 'Node',
    message: {
      label: 'root',
      children: [
        { label: 'a', children: [], owner: { who: SPENDER } },
        { label: 'b', children: [{ label: 'b1', children: [], owner: { who: USDC } }], owner: { who: SPENDER } },
      ],
      owner: { who: USDC },
    },
  },
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const asViem = (c: Case): TypedDataDefinition => c as any;

/** What viem's walletClient.signTypedData hands the account: EIP712Domain added, then serialized. */
function viemPayload(c: Case): string {
  const types = { EIP712Domain: getTypesForEIP712Domain({ domain: c.domain }), ...c.types };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return serializeTypedData({ ...c, types } as any);
}

function ethersPayload(c: Case): string {
  return JSON.stringify(TypedDataEncoder.getPayload(c.domain, c.types, c.message));
}

function fakeTurnkeyClient(seen: Array<{ payload: string; encoding: string; hashFunction: string }>) {
  return {
    async signRawPayload(p: { signWith: string; payload: string; encoding: string; hashFunction: string }) {
      seen.push(p);
      const digest =
        p.encoding === 'PAYLOAD_ENCODING_EIP712'
          ? hashTypedData(parseTypedData(p.payload))
          : eip7702AuthorizationDigest(parseEip7702Authorization(p.payload));
      const sig = secp256k1.sign(digest, Buffer.from(PRIV.slice(2), 'hex'), { prehash: false, format: 'recovered' });
      const h = Buffer.from(sig).toString('hex');
      return {
        activity: { id: 'a', status: 'ACTIVITY_STATUS_COMPLETED' },
        r: h.slice(2, 66),
        s: h.slice(66, 130),
        v: '0' + h.slice(1, 2),
      };
    },
  };
}

function expectInvalid(fn: () => unknown, re: RegExp, prefix = 'invalid EIP-712 payload: '): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err, `expected an error matching ${re}`).toBeInstanceOf(CryptoInputError);
  const e = err as CryptoInputError;
  expect(e.code).toBe('INVALID_PAYLOAD');
  expect(e.message.startsWith(prefix), e.message).toBe(true);
  expect(e.message).toMatch(re);
}

describe('EIP-712 digest matches viem and ethers', () => {
  it('EIP-712 spec Mail example: encodeType, domain separator, digest', () => {
    const typed = parseTypedData(viemPayload(CASES.mail));
    expect(eip712EncodeType(typed, 'Mail')).toBe('Mail(Person from,Person to,string contents)Person(string name,address wallet)');
    expect(hex(eip712DomainSeparator(typed))).toBe('0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f');
    expect(hex(hashTypedData(typed))).toBe('0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2');
  });

  for (const [name, c] of Object.entries(CASES)) {
    it(`${name}: viem serializeTypedData payload`, () => {
      const payload = viemPayload(c);
      expect(hex(hashTypedData(parseTypedData(payload)))).toBe(viemHashTypedData(asViem(c)));
    });
    if (!c.viemOnly) {
      it(`${name}: ethers getPayload payload`, () => {
        const payload = ethersPayload(c);
        const expected = TypedDataEncoder.hash(c.domain, c.types, c.message);
        expect(hex(hashTypedData(parseTypedData(payload)))).toBe(expected);
        expect(expected).toBe(viemHashTypedData(asViem(c)));
      });
    }
  }

  it('encodeType lists referenced types once, sorted by name, after the primary type', () => {
    const typed = parseTypedData(
      JSON.stringify({
        types: {
          Z: [
            { name: 'b', type: 'B[]' },
            { name: 'a', type: 'A' },
          ],
          B: [
            { name: 'c', type: 'C[2]' },
            { name: 'a', type: 'A' },
          ],
          A: [{ name: 'z', type: 'uint8' }],
          C: [{ name: 's', type: 'string' }],
          Unused: [{ name: 'x', type: 'bool' }],
        },
        domain: {},
        primaryType: 'Z',
        message: { b: [], a: { z: 1 } },
      }),
    );
    expect(eip712EncodeType(typed, 'Z')).toBe('Z(B[] b,A a)A(uint8 z)B(C[2] c,A a)C(string s)');
    expect(eip712EncodeType(typed, 'B')).toBe('B(C[2] c,A a)A(uint8 z)C(string s)');
  });

  it('a domain without EIP712Domain in types is typed from its present fields (name, version, chainId, verifyingContract, salt)', () => {
    // As a non-SDK client (or viem's hashTypedData itself) would send it: EIP712Domain left out.
    for (const c of [CASES.mail, CASES.domainWithSalt, CASES.partialDomain]) {
      const payload = JSON.stringify({ types: c.types, domain: c.domain, primaryType: c.primaryType, message: c.message }, (_k, v) =>
        typeof v === 'bigint' ? v.toString() : v,
      );
      const typed = parseTypedData(payload);
      expect(typed.types.get('EIP712Domain')).toEqual(getTypesForEIP712Domain({ domain: c.domain }));
      expect(hex(hashTypedData(typed))).toBe(viemHashTypedData(asViem(c)));
    }
    // Field order in the domain object does not matter; null fields are absent.
    const shuffled = JSON.stringify({
      types: CASES.mail.types,
      domain: { verifyingContract: CASES.mail.domain.verifyingContract, salt: null, chainId: '1', version: '1', name: 'Ether Mail' },
      primaryType: 'Mail',
      message: CASES.mail.message,
    });
    expect(hex(hashTypedData(parseTypedData(shuffled)))).toBe('0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2');
  });

  it("viem's serializeTypedData drops the domain when types lacks EIP712Domain; we sign what was sent", () => {
    // @turnkey/viem account.signTypedData called directly (not through walletClient.signTypedData)
    // serializes without adding EIP712Domain, and viem then sends `domain: {}`.
    const c = CASES.mail;
    const payload = serializeTypedData(asViem(c));
    expect(JSON.parse(payload).domain).toEqual({});
    const typed = parseTypedData(payload);
    expect(typed.types.get('EIP712Domain')).toEqual([]);
    expect(hex(hashTypedData(typed))).toBe(viemHashTypedData(JSON.parse(payload)));
  });

  it('an explicit EIP712Domain with a non-standard field set and order is hashed as declared', () => {
    const c: Case = {
      domain: { chainId: 1, name: 'X', extra: 'ignored' },
      types: {
        EIP712Domain: [
          { name: 'chainId', type: 'uint256' },
          { name: 'name', type: 'string' },
        ],
        Ping: [{ name: 'n', type: 'uint256' }],
      },
      primaryType: 'Ping',
      message: { n: 1 },
    };
    expect(hex(hashTypedData(parseTypedData(JSON.stringify(c))))).toBe(viemHashTypedData(asViem(c)));
  });

  it('primaryType EIP712Domain hashes the domain only (viem / eth-sig-util)', () => {
    const c = { ...CASES.mail, primaryType: 'EIP712Domain' };
    const payload = viemPayload(c);
    expect(JSON.parse(payload).message).toBeUndefined();
    const typed = parseTypedData(payload);
    expect(hex(hashTypedData(typed))).toBe(viemHashTypedData(asViem(c)));
    expect(eip712PolicyFields(typed).message).toEqual({});
  });

  it('integers as JSON numbers, decimal strings and hex strings (incl. negative and exponent forms) hash alike', () => {
    const c = CASES.negativeInts;
    const expected = viemHashTypedData(asViem(c));
    const forms = [
      { a: -128, b: (-(2n ** 255n)).toString(), c: '-1', d: '-0x800000', e: '0xff', f: ['-1', 0, '0x01', '0x' + (2n ** 255n - 1n).toString(16)], g: '-123456789012345678901234567890' },
      { a: '-128', b: '-0x8' + '0'.repeat(63), c: -1, d: -8.388608e6, e: 2.55e2, f: [-1.0, '0', 1, (2n ** 255n - 1n).toString()], g: '-123456789012345678901234567890' },
    ];
    for (const message of forms) {
      const payload = `{"types":${JSON.stringify({ EIP712Domain: getTypesForEIP712Domain({ domain: c.domain }), ...c.types })},"domain":${JSON.stringify(c.domain)},"primaryType":"Numbers","message":${JSON.stringify(message)}}`;
      expect(hex(hashTypedData(parseTypedData(payload)))).toBe(expected);
    }
    // JSON number literals are read exactly, e.g. a trailing ".0".
    const literal = viemPayload(CASES.partialDomain).replace('"n":42', '"n":42.000');
    expect(literal).toContain('42.000');
    expect(hex(hashTypedData(parseTypedData(literal)))).toBe(viemHashTypedData(asViem(CASES.partialDomain)));
  });

  it('addresses: any valid casing and an optional 0x (ethers accepts both) give the same digest', () => {
    const c = CASES.mail;
    const m = c.message as { from: { wallet: string }; to: { wallet: string } };
    const variants = [m.from.wallet.toLowerCase(), m.from.wallet.slice(2), '0x' + m.from.wallet.slice(2).toUpperCase()];
    for (const wallet of variants) {
      const payload = viemPayload({ ...c, message: { ...c.message, from: { name: 'Cow', wallet } } });
      expect(hex(hashTypedData(parseTypedData(payload)))).toBe('0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2');
    }
  });
});

describe('real SDK signers against our digest', () => {
  it('@turnkey/viem via walletClient.signTypedData equals a local viem account signature', async () => {
    const seen: Array<{ payload: string; encoding: string; hashFunction: string }> = [];
    const tk = createAccountWithAddress({ client: fakeTurnkeyClient(seen) as never, organizationId: 'o', signWith: localAccount.address });
    const wallet = createWalletClient({ account: tk, transport: custom({ request: async () => null }) });
    for (const [name, c] of Object.entries(CASES)) {
      const sig = await wallet.signTypedData(asViem(c) as never);
      expect(sig, name).toBe(await localAccount.signTypedData(asViem(c)));
    }
    expect(seen.every((p) => p.encoding === 'PAYLOAD_ENCODING_EIP712' && p.hashFunction === 'HASH_FUNCTION_NO_OP')).toBe(true);
  });

  it('@turnkey/ethers TurnkeySigner.signTypedData equals ethers Wallet.signTypedData', async () => {
    const seen: Array<{ payload: string; encoding: string; hashFunction: string }> = [];
    const signer = new TurnkeySigner({ client: fakeTurnkeyClient(seen) as never, organizationId: 'o', signWith: localAccount.address });
    const wallet = new Wallet(PRIV);
    for (const [name, c] of Object.entries(CASES)) {
      if (c.viemOnly) continue;
      const sig = await signer.signTypedData(c.domain, c.types, c.message);
      expect(sig, name).toBe(await wallet.signTypedData(c.domain, c.types, c.message));
    }
    expect(seen.length).toBeGreaterThan(5);
  });

  it('@turnkey/viem signAuthorization equals a local viem account authorization', async () => {
    const seen: Array<{ payload: string; encoding: string; hashFunction: string }> = [];
    const tk = createAccountWithAddress({ client: fakeTurnkeyClient(seen) as never, organizationId: 'o', signWith: localAccount.address });
    for (const a of [
      { address: USDC, chainId: 1, nonce: 0 },
      { address: SPENDER, chainId: 0, nonce: 7 },
      { address: PERMIT2, chainId: 8453, nonce: 123456789 },
    ] as const) {
      const ours = await tk.signAuthorization!(a);
      const theirs = await localAccount.signAuthorization(a);
      expect({ r: ours.r, s: ours.s, yParity: ours.yParity }).toEqual({ r: theirs.r, s: theirs.s, yParity: theirs.yParity });
    }
    expect(seen[0]).toMatchObject({ encoding: 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION', hashFunction: 'HASH_FUNCTION_NO_OP' });
    expect(JSON.parse(seen[0].payload)).toEqual({ address: USDC, chainId: 1, nonce: 0 });
  });
});

describe('eth.eip_712 policy view', () => {
  it('Permit2 batch: field names, domain defaults, integers as decimal strings, addresses lowercase', () => {
    const typed = parseTypedData(ethersPayload(CASES.permit2Batch));
    const fields = eip712PolicyFields(typed);
    expect(fields).toEqual({
      primary_type: 'PermitBatchTransferFrom',
      domain: { name: 'Permit2', version: '', chain_id: 1n, verifying_contract: PERMIT2.toLowerCase() },
      message: {
        permitted: [
          { token: USDC.toLowerCase(), amount: '100000000' },
          { token: '0xdac17f958d2ee523a2206206994597c13d831ec7', amount: '5' },
        ],
        spender: SPENDER,
        nonce: '7',
        deadline: '1900000000',
      },
    });
    // Same view from the viem payload.
    expect(eip712PolicyFields(parseTypedData(viemPayload(CASES.permit2Batch)))).toEqual(fields);
    // Assignable to the policy engine's context type.
    const ctx: Policy.Eip712TypedData = fields;
    expect(ctx.primary_type).toBe('PermitBatchTransferFrom');
  });

  it('address and bytes values go through markCaseInsensitive; strings, bools and ints do not', () => {
    const mark = (text: string) => ({ ci: text });
    const fields = eip712PolicyFields(parseTypedData(viemPayload(CASES.bytes)), { markCaseInsensitive: mark });
    expect(fields.message).toEqual({
      data: { ci: '0xdeadbeef00' + '12'.repeat(100) },
      empty: { ci: '0x' },
      b1: { ci: '0xff' },
      b32: { ci: '0x' + 'ab'.repeat(32) },
      list: [{ ci: '0x01' }, { ci: '0x' }, { ci: '0x' + 'cd'.repeat(40) }],
      selectors: [{ ci: '0xa9059cbb' }, { ci: '0x095ea7b3' }],
      ok: true,
    });
    const nested = eip712PolicyFields(parseTypedData(viemPayload(CASES.nestedArrays)), { markCaseInsensitive: mark });
    expect((nested.message.members as Array<Record<string, unknown>>)[0]).toEqual({
      account: { ci: SPENDER },
      roles: [{ ci: '0x' + 'aa'.repeat(32) }, { ci: '0x' + '00'.repeat(32) }],
      active: true,
      cells: [{ x: '-1', y: '2' }],
    });
    expect(nested.message.tags).toEqual(['a', '', 'ünïcødé ✓']);
    expect(nested.message.matrix).toEqual([['1', '2', '255'], [], ['0']]);
  });

  it('domain fields absent from the domain: name/version/verifying_contract are "", chain_id is left out', () => {
    const f = eip712PolicyFields(parseTypedData(viemPayload(CASES.partialDomain)));
    expect(f.domain).toEqual({ name: '', version: '', chain_id: 10n, verifying_contract: '' });
    const g = eip712PolicyFields(parseTypedData(viemPayload({ ...CASES.partialDomain, domain: { name: 'N' } })));
    expect(g.domain).toEqual({ name: 'N', version: '', verifying_contract: '' });
    expect('chain_id' in g.domain).toBe(false);
  });

  it('keys the types do not declare are neither hashed nor shown to policies', () => {
    const c = CASES.erc2612Permit;
    const payload = viemPayload({ ...c, message: { ...c.message, to: '0x9999999999999999999999999999999999999999' } });
    const typed = parseTypedData(payload);
    expect(hex(hashTypedData(typed))).toBe(viemHashTypedData(asViem(c)));
    expect(Object.keys(eip712PolicyFields(typed).message)).toEqual(['owner', 'spender', 'value', 'nonce', 'deadline']);
  });

  it('a field named __proto__ stays a plain field', () => {
    const payload = '{"types":{"T":[{"name":"__proto__","type":"string"}]},"domain":{},"primaryType":"T","message":{"__proto__":"x"}}';
    const typed = parseTypedData(payload);
    expect(Object.getPrototypeOf(typed.message)).toBe(Object.prototype);
    expect(Object.keys(eip712PolicyFields(typed).message)).toEqual(['__proto__']);
    expect(hex(hashTypedData(typed))).toBe(viemHashTypedData(JSON.parse(payload)));
  });
});

describe('EIP-7702 authorization', () => {
  const auths = [
    { address: USDC, chainId: 1, nonce: 0 },
    { address: SPENDER, chainId: 0, nonce: 0 },
    { address: PERMIT2.toLowerCase(), chainId: 11155111, nonce: 127 },
    { address: '0x90F79bf6EB2c4f870365E785982E1f101E93b906', chainId: 8453, nonce: 128 },
  ];

  it('digest equals viem hashAuthorization', () => {
    for (const a of auths) {
      const parsed = parseEip7702Authorization(JSON.stringify(a));
      expect(hex(eip7702AuthorizationDigest(parsed))).toBe(
        hashAuthorization({ address: a.address as `0x${string}`, chainId: a.chainId, nonce: a.nonce }),
      );
    }
  });

  it('numbers may arrive as decimal or hex strings; large values are exact', () => {
    const big = { address: USDC, chainId: 2n ** 200n + 5n, nonce: 2n ** 64n - 1n };
    const expected = hashAuthorization({ address: USDC, chainId: Number(1), nonce: 0 });
    expect(hex(eip7702AuthorizationDigest(parseEip7702Authorization(`{"address":"${USDC}","chainId":"1","nonce":"0x0"}`)))).toBe(expected);
    const parsed = parseEip7702Authorization(`{"nonce":"${big.nonce}","chainId":"0x${big.chainId.toString(16)}","address":"${USDC}"}`);
    expect(parsed).toEqual({ address: USDC.toLowerCase(), chainId: big.chainId, nonce: big.nonce });
    // viem's own hashAuthorization takes numbers; compare against its RLP via the bigint path.
    expect(hex(eip7702AuthorizationDigest(parsed))).toBe(
      hashAuthorization({ address: USDC, chainId: big.chainId as unknown as number, nonce: big.nonce as unknown as number }),
    );
  });

  it('policy view: checksummed address, bigint chain_id and nonce', () => {
    const f = eip7702PolicyFields(parseEip7702Authorization(JSON.stringify({ address: PERMIT2.toLowerCase(), chainId: 1, nonce: 9 })));
    expect(f).toEqual({ address: PERMIT2, chain_id: 1n, nonce: 9n });
    const ctx: Policy.Eip7702Authorization = f;
    expect(ctx.address).toBe(PERMIT2);
  });

  it('bad input is a clear INVALID_PAYLOAD error', () => {
    const P = 'invalid EIP-7702 authorization payload: ';
    expectInvalid(() => parseEip7702Authorization('{"address":'), /malformed JSON/, P);
    expectInvalid(() => parseEip7702Authorization('[1,2,3]'), /expected a JSON object/, P);
    expectInvalid(() => parseEip7702Authorization(`{"address":"${USDC}","chainId":1}`), /missing "nonce"/, P);
    expectInvalid(() => parseEip7702Authorization(`{"address":"${USDC}","nonce":1}`), /missing "chainId"/, P);
    expectInvalid(() => parseEip7702Authorization('{"chainId":1,"nonce":1}'), /missing "address"/, P);
    expectInvalid(() => parseEip7702Authorization(`{"address":"${USDC}","chainId":1,"nonce":"${2n ** 64n}"}`), /nonce .* out of range for uint64/, P);
    expectInvalid(() => parseEip7702Authorization(`{"address":"${USDC}","chainId":-1,"nonce":0}`), /chainId -1 is out of range/, P);
    expectInvalid(() => parseEip7702Authorization(`{"address":"${USDC}","chainId":1.5,"nonce":0}`), /chainId: the number 1.5 is not an integer/, P);
    expectInvalid(() => parseEip7702Authorization(`{"address":"${USDC}","chainId":1,"nonce":18446744073709551615}`), /not a safe integer/, P);
    expectInvalid(() => parseEip7702Authorization('{"address":"0x1234","chainId":1,"nonce":0}'), /not a 20-byte hex address/, P);
    expectInvalid(() => parseEip7702Authorization(`{"address":"${USDC.slice(2)}","chainId":1,"nonce":0}`), /not a 20-byte hex address/, P);
    expectInvalid(() => parseEip7702Authorization(`{"address":"${USDC.replace('A0b8', 'a0B8')}","chainId":1,"nonce":0}`), /EIP-55 checksum/, P);
    expectInvalid(() => parseEip7702Authorization(`{"address":"${USDC}","chainId":true,"nonce":0}`), /chainId: expected an integer/, P);
    expectInvalid(() => parseEip7702Authorization(`{"address":"${USDC}","chainId":1,"chainId":2,"nonce":0}`), /duplicate key "chainId"/, P);
  });
});

describe('EIP-712 bad input is a clear INVALID_PAYLOAD error', () => {
  const base = JSON.parse(viemPayload(CASES.mail));
  const withMsg = (message: unknown, types: unknown = base.types) => JSON.stringify({ ...base, types, message });
  const one = (type: string, value: unknown) =>
    JSON.stringify({ types: { T: [{ name: 'v', type }] }, domain: {}, primaryType: 'T', message: { v: value } });

  it('malformed JSON', () => {
    expectInvalid(() => parseTypedData(''), /malformed JSON: unexpected end of input/);
    expectInvalid(() => parseTypedData('{"types":'), /malformed JSON/);
    expectInvalid(() => parseTypedData('[1,]'), /malformed JSON/);
    expectInvalid(() => parseTypedData('{"a":1} x'), /malformed JSON: trailing characters/);
    expectInvalid(() => parseTypedData("{'a':1}"), /malformed JSON: expected a string key/);
    expectInvalid(() => parseTypedData('{"a":01}'), /malformed JSON/);
    expectInvalid(() => parseTypedData('{"a":"\\x"}'), /malformed JSON: bad escape/);
    expectInvalid(() => parseTypedData('{"a":"\n"}'), /control character/);
    expectInvalid(() => parseTypedData('['.repeat(200) + ']'.repeat(200)), /nesting too deep/);
    expectInvalid(() => parseTypedData(withMsg(base.message).replace('"primaryType"', '"primaryType":"Mail","primaryType"')), /duplicate key "primaryType"/);
    expectInvalid(() => parseTypedData(undefined as unknown as string), /must be a JSON string/);
  });

  it('missing or malformed top-level members', () => {
    expectInvalid(() => parseTypedData('"hello"'), /expected a JSON object/);
    expectInvalid(() => parseTypedData(JSON.stringify({ ...base, primaryType: undefined })), /missing "primaryType"/);
    expectInvalid(() => parseTypedData(JSON.stringify({ ...base, primaryType: 5 })), /"primaryType" must be a string/);
    expectInvalid(() => parseTypedData(JSON.stringify({ ...base, types: undefined })), /missing "types"/);
    expectInvalid(() => parseTypedData(JSON.stringify({ ...base, types: [] })), /"types" must be an object/);
    expectInvalid(() => parseTypedData(JSON.stringify({ ...base, domain: 'x' })), /"domain" must be an object/);
    expectInvalid(() => parseTypedData(JSON.stringify({ ...base, message: undefined })), /missing "message"/);
    expectInvalid(() => parseTypedData(JSON.stringify({ ...base, message: [1] })), /message: expected a Mail object, got an array/);
    expectInvalid(() => parseTypedData(JSON.stringify({ ...base, primaryType: 'Letter' })), /primaryType "Letter" is not defined/);
  });

  it('unknown and malformed types', () => {
    expectInvalid(() => parseTypedData(one('Foo', 1)), /types\.T\.v: unknown type "Foo"/);
    expectInvalid(() => parseTypedData(one('uint', 1)), /use a sized integer type/);
    expectInvalid(() => parseTypedData(one('int[]', [1])), /use a sized integer type/);
    expectInvalid(() => parseTypedData(one('uint7', 1)), /unknown type "uint7"/);
    expectInvalid(() => parseTypedData(one('uint264', 1)), /unknown type "uint264"/);
    expectInvalid(() => parseTypedData(one('bytes33', '0x')), /unknown type "bytes33"/);
    expectInvalid(() => parseTypedData(one('bytes0', '0x')), /unknown type "bytes0"/);
    expectInvalid(() => parseTypedData(one('uint8[x]', [1])), /unknown type/);
    expectInvalid(() => parseTypedData(one('uint8[01]', [1])), /bad array length/);
    expectInvalid(() => parseTypedData(one('uint8' + '[]'.repeat(40), [])), /more than 32 array dimensions/);
    expectInvalid(
      () => parseTypedData(JSON.stringify({ types: { uint8: [], T: [] }, domain: {}, primaryType: 'T', message: {} })),
      /invalid struct type name "uint8"/,
    );
    expectInvalid(
      () => parseTypedData(JSON.stringify({ types: { 'My Type': [], T: [] }, domain: {}, primaryType: 'T', message: {} })),
      /invalid struct type name "My Type"/,
    );
    expectInvalid(
      () => parseTypedData(withMsg(base.message, { ...base.types, Person: [{ name: 'name', type: 'string' }, { name: 'name', type: 'address' }] })),
      /types\.Person lists the field "name" twice/,
    );
    expectInvalid(() => parseTypedData(withMsg(base.message, { ...base.types, Person: [{ name: 'a,b', type: 'string' }] })), /types\.Person\[0\]\.name must be a field name/);
    expectInvalid(() => parseTypedData(withMsg(base.message, { ...base.types, Person: [{ name: 'a' }] })), /types\.Person\[0\]\.type must be a type name/);
    expectInvalid(() => parseTypedData(withMsg(base.message, { ...base.types, Person: {} })), /types\.Person must be an array/);
  });

  it('bad values', () => {
    expectInvalid(() => parseTypedData(withMsg({ ...base.message, contents: undefined })), /message\.contents: missing value for string field/);
    expectInvalid(() => parseTypedData(withMsg({ ...base.message, contents: null })), /message\.contents: missing value/);
    expectInvalid(() => parseTypedData(withMsg({ ...base.message, contents: 5 })), /message\.contents: expected a string, got a number/);
    expectInvalid(() => parseTypedData(withMsg({ ...base.message, to: { name: 'Bob' } })), /message\.to\.wallet: missing value for address field/);
    expectInvalid(() => parseTypedData(withMsg({ ...base.message, to: { name: 'Bob', wallet: '0x12' } })), /message\.to\.wallet: "0x12" is not a 20-byte hex address/);
    expectInvalid(
      () => parseTypedData(withMsg({ ...base.message, to: { name: 'Bob', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD827' } })),
      /message\.to\.wallet: .* invalid EIP-55 checksum/,
    );
    expectInvalid(() => parseTypedData(one('uint8', 256)), /message\.v: 256 is out of range for uint8/);
    expectInvalid(() => parseTypedData(one('uint256', '-1')), /-1 is out of range for uint256/);
    expectInvalid(() => parseTypedData(one('uint256', (2n ** 256n).toString())), /out of range for uint256/);
    expectInvalid(() => parseTypedData(one('int8', -129)), /-129 is out of range for int8/);
    expectInvalid(() => parseTypedData(one('int8', 128)), /128 is out of range for int8/);
    expectInvalid(() => parseTypedData(one('uint256', 1.5)), /the number 1\.5 is not an integer/);
    expectInvalid(() => parseTypedData(one('uint256', 1e21)), /not a safe integer; send large integers as decimal strings/);
    expectInvalid(() => parseTypedData('{"types":{"T":[{"name":"v","type":"uint256"}]},"domain":{},"primaryType":"T","message":{"v":9007199254740993}}'), /not a safe integer/);
    expectInvalid(() => parseTypedData(one('uint256', '12abc')), /expected an integer, got the string "12abc"/);
    expectInvalid(() => parseTypedData(one('uint256', '')), /expected an integer/);
    expectInvalid(() => parseTypedData(one('uint256', ' 1')), /expected an integer/);
    expectInvalid(() => parseTypedData(one('uint256', true)), /expected an integer .* got a boolean/);
    expectInvalid(() => parseTypedData(one('bool', 'true')), /expected true or false, got the string "true"/);
    expectInvalid(() => parseTypedData(one('bool', 1)), /expected true or false/);
    expectInvalid(() => parseTypedData(one('bytes32', '0x1234')), /expected 32 bytes, got 2/);
    expectInvalid(() => parseTypedData(one('bytes', '0x123')), /not 0x-prefixed hex with an even number of digits/);
    expectInvalid(() => parseTypedData(one('bytes', '1234')), /not 0x-prefixed hex/);
    expectInvalid(() => parseTypedData(one('bytes', '0xzz')), /not 0x-prefixed hex/);
    expectInvalid(() => parseTypedData(one('string[2]', ['a'])), /message\.v: expected 2 elements, got 1/);
    expectInvalid(() => parseTypedData(one('string[]', 'a')), /message\.v: expected an array, got the string "a"/);
    expectInvalid(() => parseTypedData(one('uint8[][]', [[1], [2, 300]])), /message\.v\[1\]\[1\]: 300 is out of range for uint8/);
    expectInvalid(
      () => parseTypedData(withMsg({ ...base.message, permitted: 1 }, { ...base.types, Mail: [...base.types.Mail, { name: 'permitted', type: 'Person[]' }] })),
      /message\.permitted: expected an array, got a number/,
    );
    // The domain's values are checked against its (derived or declared) types too.
    expectInvalid(() => parseTypedData(JSON.stringify({ ...base, domain: { ...base.domain, chainId: 'one' } })), /domain\.chainId: expected an integer/);
    expectInvalid(
      () => parseTypedData(JSON.stringify({ types: { T: [] }, domain: { verifyingContract: 'nope' }, primaryType: 'T', message: {} })),
      /domain\.verifyingContract: "nope" is not a 20-byte hex address/,
    );
    expectInvalid(() => parseTypedData(JSON.stringify({ ...base, domain: { ...base.domain, name: undefined } })), /domain\.name: missing value/);
  });
});
