// Ethereum ABI parsing and calldata decoding (src/chains/ethereum/abi.ts) against viem as the reference
// encoder/decoder: calls are encoded with viem's encodeFunctionData and our decode must equal viem's
// decodeFunctionData (tuples as positional arrays). Also: selectors,
// canonical signatures, strictness on malformed calldata, work bounds, and ABI validation errors.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Interface } from 'ethers';
import { decodeFunctionData, encodeFunctionData, erc20Abi, getAddress, toFunctionSelector, type Abi } from 'viem';
import {
  AbiDecodeError,
  AbiError,
  decodeFunctionCall,
  functionSelector,
  parseAbi,
  parseAbiJson,
  type AbiParameter,
} from '../../../src/chains/ethereum/abi.js';

type JsonParam = { name?: string; type: string; components?: JsonParam[] };

/** viem returns named tuples as objects; ours are arrays in component order. */
function positional(value: unknown, param: JsonParam): unknown {
  const m = /^(.*?)((?:\[\d*\])*)$/.exec(param.type)!;
  if (m[2] !== '') {
    const inner = { ...param, type: param.type.replace(/\[\d*\]$/, '') };
    return (value as unknown[]).map((v) => positional(v, inner));
  }
  if (m[1] === 'tuple') {
    const comps = param.components!;
    return comps.map((c, i) => positional(Array.isArray(value) ? value[i] : (value as Record<string, unknown>)[c.name!], c));
  }
  if (m[1] === 'bytes' || /^bytes\d+$/.test(m[1])) return (value as string).toLowerCase();
  // viem gives integers of up to 48 bits as numbers; every integer is a bigint for policies.
  if (typeof value === 'number') return BigInt(value);
  return value;
}

/** Decodes with both libraries and checks they agree. Returns ours. */
function roundTrip(abi: readonly JsonParam[] | Abi, functionName: string, args: readonly unknown[]) {
  const data = encodeFunctionData({ abi: abi as Abi, functionName, args } as never);
  const ours = decodeFunctionCall(abi as readonly unknown[], data)!;
  expect(ours).toBeDefined();
  const theirs = decodeFunctionData({ abi: abi as Abi, data });
  expect(ours.functionName).toBe(theirs.functionName);
  expect(ours.functionSignature).toBe(data.slice(0, 10));
  const entry = (abi as { type?: string; name?: string; inputs: JsonParam[] }[]).find(
    (e) => e.name === functionName && toFunctionSelector(e as never) === data.slice(0, 10),
  )!;
  const expected: Record<string, unknown> = {};
  entry.inputs.forEach((p, i) => {
    expected[p.name ? p.name : String(i)] = positional((theirs.args as unknown[])[i], p);
  });
  expect(ours.args).toEqual(expected);
  return ours;
}

const COMPLEX_ABI = [
  {
    type: 'function',
    name: 'execute',
    stateMutability: 'payable',
    inputs: [
      {
        name: 'calls',
        type: 'tuple[]',
        components: [
          { name: 'target', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'data', type: 'bytes' },
        ],
      },
      { name: 'flags', type: 'uint16[3]' },
      { name: 'labels', type: 'string[]' },
      { name: 'salt', type: 'bytes32' },
      { name: 'deadline', type: 'uint64' },
    ],
    outputs: [{ name: '', type: 'bytes[]' }],
  },
  {
    type: 'function',
    name: 'nested',
    inputs: [
      {
        name: 'orders',
        type: 'tuple[2][]',
        components: [
          { name: 'id', type: 'uint256' },
          {
            name: 'legs',
            type: 'tuple[]',
            components: [
              { name: 'who', type: 'address[]' },
              { name: 'memo', type: 'string' },
              { name: 'ok', type: 'bool' },
            ],
          },
        ],
      },
      { name: 'grid', type: 'int24[2][]' },
      { name: 'blobs', type: 'bytes[]' },
      { name: 'fixedStrings', type: 'string[2]' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'signed',
    inputs: [
      { name: 'a', type: 'int8' },
      { name: 'b', type: 'int256' },
      { name: 'c', type: 'int24' },
      { name: 'd', type: 'int256' },
      { name: 'e', type: 'uint8' },
      { name: 'f', type: 'bytes1' },
      { name: 'g', type: 'bool' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'raw',
    inputs: [
      { name: 'payload', type: 'bytes' },
      { name: 'text', type: 'string' },
    ],
    outputs: [],
  },
  { type: 'function', name: 'unnamed', inputs: [{ type: 'address' }, { name: '', type: 'uint256' }, { name: 'x', type: 'bool' }], outputs: [] },
  { type: 'function', name: 'overloaded', inputs: [{ name: 'a', type: 'uint256' }], outputs: [] },
  { type: 'function', name: 'overloaded', inputs: [{ name: 'a', type: 'address' }], outputs: [] },
  { type: 'event', name: 'Transfer', anonymous: false, inputs: [{ name: 'from', type: 'address', indexed: true }] },
  { type: 'error', name: 'Nope', inputs: [{ name: 'why', type: 'string' }] },
  { type: 'constructor', inputs: [{ name: 'owner', type: 'address' }], stateMutability: 'nonpayable' },
  { type: 'fallback', stateMutability: 'payable' },
  { type: 'receive', stateMutability: 'payable' },
] as const;

const addr = () => getAddress(`0x${randomBytes(20).toString('hex')}`);

describe('selectors and signatures', () => {
  it('matches the well-known ERC-20 selectors and viem for tuple signatures', () => {
    expect(functionSelector('transfer(address,uint256)')).toBe('0xa9059cbb');
    expect(functionSelector('approve(address,uint256)')).toBe('0x095ea7b3');
    const abi = parseAbi(COMPLEX_ABI);
    const byName = new Map([...abi.functions.values()].map((f) => [`${f.name}/${f.selector}`, f]));
    for (const entry of COMPLEX_ABI.filter((e) => e.type === 'function')) {
      const selector = toFunctionSelector(entry as never);
      expect(byName.get(`${entry.name}/${selector}`), entry.name).toBeDefined();
    }
    const execute = [...abi.functions.values()].find((f) => f.name === 'execute')!;
    expect(execute.signature).toBe('execute((address,uint256,bytes)[],uint16[3],string[],bytes32,uint64)');
    const signed = [...abi.functions.values()].find((f) => f.name === 'signed')!;
    expect(signed.signature).toBe('signed(int8,int256,int24,int256,uint8,bytes1,bool)');
    expect(abi.functions.size).toBe(7);
  });

  it('treats an entry without "type" as a function', () => {
    const abi = parseAbi([{ name: 'ping', inputs: [{ name: 'n', type: 'uint' }] }]);
    expect([...abi.functions.values()][0]).toMatchObject({ name: 'ping', signature: 'ping(uint256)', selector: functionSelector('ping(uint256)') });
  });
});

describe('decodeFunctionCall agrees with viem', () => {
  it('ERC-20 transfer and approve', () => {
    const to = addr();
    const t = roundTrip(erc20Abi, 'transfer', [to, 10n ** 24n]);
    expect(t).toMatchObject({ functionName: 'transfer', functionSignature: '0xa9059cbb', canonicalSignature: 'transfer(address,uint256)' });
    expect(t.args).toEqual({ recipient: to, amount: 10n ** 24n });
    const a = roundTrip(erc20Abi, 'approve', [to, 2n ** 256n - 1n]);
    expect(a.args.amount).toBe(2n ** 256n - 1n);
    // Addresses come back EIP-55 checksummed whatever the input casing.
    const lower = roundTrip(erc20Abi, 'transfer', [to.toLowerCase(), 1n]);
    expect(lower.args.recipient).toBe(to);
  });

  it('tuples, dynamic arrays of tuples, fixed arrays, string arrays', () => {
    const calls = [
      { target: addr(), value: 0n, data: '0x' as const },
      { target: addr(), value: 123456789n, data: `0x${randomBytes(70).toString('hex')}` as `0x${string}` },
    ];
    const r = roundTrip(COMPLEX_ABI, 'execute', [calls, [1, 65535, 0], ['a', '', 'üñïçødé ✓'], `0x${'ab'.repeat(32)}`, 2n ** 64n - 1n]);
    // Tuples are positional: contract_call_args['calls'][1][0] is the second call's target.
    expect((r.args.calls as unknown[][])[1][0]).toBe(calls[1].target);
    expect(r.args.flags).toEqual([1n, 65535n, 0n]);
  });

  it('nested tuples in static and dynamic arrays, int arrays, bytes[]', () => {
    const leg = (n: number) => ({ who: Array.from({ length: n }, addr), memo: 'x'.repeat(n * 17), ok: n % 2 === 0 });
    const orders = [
      [
        { id: 1n, legs: [leg(0), leg(3)] },
        { id: 2n, legs: [] },
      ],
      [
        { id: 3n, legs: [leg(1)] },
        { id: 2n ** 255n, legs: [leg(2), leg(0), leg(5)] },
      ],
    ];
    roundTrip(COMPLEX_ABI, 'nested', [orders, [[-1, 8388607], [-8388608, 0]], ['0x', '0x00', `0x${randomBytes(33).toString('hex')}`], ['one', 'two']]);
    roundTrip(COMPLEX_ABI, 'nested', [[], [], [], ['', '']]);
  });

  it('negative and boundary integers, bytes1, bool', () => {
    roundTrip(COMPLEX_ABI, 'signed', [-128, -(2n ** 255n), -1, 2n ** 255n - 1n, 255, '0xff', true]);
    const r = roundTrip(COMPLEX_ABI, 'signed', [127, -1n, -8388608, -42n, 0, '0x00', false]);
    expect(r.args).toMatchObject({ a: 127n, b: -1n, c: -8388608n, d: -42n, e: 0n, f: '0x00', g: false });
  });

  it('bytes and string, including empty and multi-word values', () => {
    const r = roundTrip(COMPLEX_ABI, 'raw', [`0x${'DE'.repeat(65)}`, 'hello, 世界 🌍'.repeat(5)]);
    expect(r.args.payload).toBe(`0x${'de'.repeat(65)}`);
    roundTrip(COMPLEX_ABI, 'raw', ['0x', '']);
  });

  it('keys unnamed parameters by position, and tells overloads apart by selector', () => {
    const a = addr();
    const r = roundTrip(COMPLEX_ABI, 'unnamed', [a, 7n, true]);
    expect(r.args).toEqual({ '0': a, '1': 7n, x: true });
    const byInt = roundTrip(COMPLEX_ABI, 'overloaded', [5n]);
    const byAddress = roundTrip(COMPLEX_ABI, 'overloaded', [a]);
    expect(byInt.functionSignature).not.toBe(byAddress.functionSignature);
    expect(byInt.args).toEqual({ a: 5n });
    expect(byAddress.args).toEqual({ a });
  });

  it('random values over the complex ABI, 50 rounds', () => {
    const rnd = (n: number) => Math.floor(Math.random() * n);
    for (let i = 0; i < 50; i++) {
      const calls = Array.from({ length: rnd(4) }, () => ({ target: addr(), value: BigInt(`0x${randomBytes(rnd(32) + 1).toString('hex')}`), data: `0x${randomBytes(rnd(100)).toString('hex')}` }));
      const labels = Array.from({ length: rnd(4) }, () => randomBytes(rnd(80)).toString('base64'));
      roundTrip(COMPLEX_ABI, 'execute', [calls, [rnd(65536), rnd(65536), rnd(65536)], labels, `0x${randomBytes(32).toString('hex')}`, BigInt(rnd(2 ** 31))]);
      roundTrip(COMPLEX_ABI, 'signed', [rnd(256) - 128, BigInt(`0x${randomBytes(31).toString('hex')}`) * (rnd(2) ? 1n : -1n), rnd(2 ** 24) - 2 ** 23, -BigInt(rnd(1e9)), rnd(256), `0x${randomBytes(1).toString('hex')}`, rnd(2) === 1]);
    }
  });

  it('passes addresses through opts.address (the policy engine marks them case-insensitive)', () => {
    const to = addr();
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, 1n] });
    const r = decodeFunctionCall(erc20Abi, data, { address: (a) => ({ ci: a.toLowerCase() }) })!;
    expect(r.args.recipient).toEqual({ ci: to.toLowerCase() });
  });
});

describe('calldata that does not fit', () => {
  const abi = parseAbi(COMPLEX_ABI);
  const transferAbi = parseAbi(erc20Abi);
  const transfer = (to: string, amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to as `0x${string}`, amount] });

  it('is undefined for an unknown selector, short or non-hex data', () => {
    expect(decodeFunctionCall(abi, transfer(addr(), 1n))).toBeUndefined();
    expect(decodeFunctionCall(transferAbi, '0xa9059c')).toBeUndefined();
    expect(decodeFunctionCall(transferAbi, '0x')).toBeUndefined();
    expect(decodeFunctionCall(transferAbi, '0xzz059cbb')).toBeUndefined();
  });

  it('refuses dirty padding instead of masking it', () => {
    const clean = transfer(addr(), 1n);
    const dirtyAddress = clean.slice(0, 10) + 'ff' + clean.slice(12);
    expect(() => decodeFunctionCall(transferAbi, dirtyAddress)).toThrow(AbiDecodeError);
    const u8 = parseAbi([{ type: 'function', name: 'f', inputs: [{ name: 'v', type: 'uint8' }] }]);
    const sel = functionSelector('f(uint8)');
    expect(decodeFunctionCall(u8, sel + (255).toString(16).padStart(64, '0'))!.args.v).toBe(255n);
    expect(() => decodeFunctionCall(u8, sel + (256).toString(16).padStart(64, '0'))).toThrow(/does not fit uint8/);
    const i8 = parseAbi([{ type: 'function', name: 'g', inputs: [{ name: 'v', type: 'int8' }] }]);
    expect(() => decodeFunctionCall(i8, functionSelector('g(int8)') + '00'.repeat(31) + '80')).toThrow(/does not fit int8/);
    const b = parseAbi([{ type: 'function', name: 'h', inputs: [{ name: 'v', type: 'bool' }] }]);
    expect(() => decodeFunctionCall(b, functionSelector('h(bool)') + '00'.repeat(31) + '02')).toThrow(/bool/);
    const b1 = parseAbi([{ type: 'function', name: 'k', inputs: [{ name: 'v', type: 'bytes1' }] }]);
    expect(() => decodeFunctionCall(b1, functionSelector('k(bytes1)') + 'ab' + '00'.repeat(30) + '01')).toThrow(/padding/);
  });

  it('refuses truncated data and offsets or lengths outside the calldata', () => {
    const clean = transfer(addr(), 1n);
    expect(() => decodeFunctionCall(transferAbi, clean.slice(0, -2))).toThrow(AbiDecodeError);
    const raw = encodeFunctionData({ abi: COMPLEX_ABI, functionName: 'raw', args: ['0x1234', 'hi'] });
    const badOffset = raw.slice(0, 10) + 'ff'.repeat(32) + raw.slice(74);
    expect(() => decodeFunctionCall(abi, badOffset)).toThrow(/points past the end/);
    // A bytes length far beyond the data, and a huge array length, fail before allocating anything.
    const bytesOnly = parseAbi([{ type: 'function', name: 'b', inputs: [{ name: 'v', type: 'bytes' }] }]);
    const hugeLen = functionSelector('b(bytes)') + (32).toString(16).padStart(64, '0') + (1_000_000).toString(16).padStart(64, '0');
    expect(() => decodeFunctionCall(bytesOnly, hugeLen)).toThrow(AbiDecodeError);
    const arr = parseAbi([{ type: 'function', name: 'a', inputs: [{ name: 'v', type: 'uint256[]' }] }]);
    const hugeArray = functionSelector('a(uint256[])') + (32).toString(16).padStart(64, '0') + (2 ** 40).toString(16).padStart(64, '0');
    expect(() => decodeFunctionCall(arr, hugeArray)).toThrow(/points past the end/);
    const longArray = functionSelector('a(uint256[])') + (32).toString(16).padStart(64, '0') + (3).toString(16).padStart(64, '0') + '00'.repeat(64);
    expect(() => decodeFunctionCall(arr, longArray)).toThrow(/3 elements run past the end/);
  });

  it('bounds the work of aliased offsets (every element pointing at one large value)', () => {
    const bytesArray = parseAbi([{ type: 'function', name: 'z', inputs: [{ name: 'v', type: 'bytes[]' }] }]);
    const n = 2000;
    const word = (x: number) => x.toString(16).padStart(64, '0');
    // head: offset 32 → array of n elements, each offset pointing at the same 60 KB value.
    const shared = 32 * n; // relative to the start of the element heads
    let body = word(32) + word(n);
    for (let i = 0; i < n; i++) body += word(shared);
    body += word(60_000) + 'ab'.repeat(60_000) + '00'.repeat(32 - (60_000 % 32));
    const started = Date.now();
    expect(() => decodeFunctionCall(bytesArray, functionSelector('z(bytes[])') + body)).toThrow(/too large/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('ignores trailing bytes after the arguments, as the EVM does', () => {
    const to = addr();
    expect(decodeFunctionCall(transferAbi, transfer(to, 9n) + 'deadbeef')!.args).toEqual({ recipient: to, amount: 9n });
  });
});

describe('ABI validation', () => {
  const bad: [unknown, RegExp][] = [
    [{ abi: [] }, /must be a JSON array/],
    [[1], /abi\[0\]: expected an object/],
    [[{ type: 'function', name: 'f', inputs: [{ name: 'a', type: 'uint7' }] }], /abi\[0\]\.inputs\[0\]\.type: invalid type uint7/],
    [[{ type: 'function', name: 'f', inputs: [{ name: 'a', type: 'bytes33' }] }], /bytes33/],
    [[{ type: 'function', name: 'f', inputs: [{ name: 'a', type: 'strin' }] }], /unknown type "strin"/],
    [[{ type: 'function', name: 'f', inputs: [{ name: 'a', type: 'tuple' }] }], /components/],
    [[{ type: 'function', name: 'f', inputs: [{ name: 'a', type: 'tuple', components: [] }] }], /at least one component/],
    [[{ type: 'function', name: 'f', inputs: [{ name: 'a', type: 'uint256[0]' }] }], /invalid array length 0/],
    [[{ type: 'function', name: 'f', inputs: [{ name: 'a' }] }], /\.type: expected a string/],
    [[{ type: 'function', name: 'f', inputs: [{ name: 5, type: 'bool' }] }], /\.name: expected a string/],
    [[{ type: 'function', inputs: [] }], /needs a name/],
    [[{ type: 'function', name: 'has space', inputs: [] }], /needs a name/],
    [[{ type: 'function', name: 'f', inputs: {} }], /inputs: expected an array/],
    [[{ type: 'function', name: 'f', inputs: [], outputs: [{ type: 'nope' }] }], /outputs\[0\]\.type/],
    [[{ type: 'event', name: 'E', inputs: [{ type: 'uint3' }] }], /abi\[0\]\.inputs\[0\]/],
    [[{ type: 'instruction', name: 'f' }], /abi\[0\]\.type: expected one of/],
  ];
  it.each(bad.map(([abi, re], i) => [i, abi, re] as const))('refuses malformed ABI #%i', (_i, abi, re) => {
    expect(() => parseAbi(abi)).toThrow(AbiError);
    expect(() => parseAbi(abi)).toThrow(re);
  });

  it('refuses non-JSON text and tuples nested too deeply', () => {
    expect(() => parseAbiJson('[{')).toThrow(/not valid JSON/);
    let param: JsonParam = { name: 'leaf', type: 'uint256' };
    for (let i = 0; i < 40; i++) param = { name: `t${i}`, type: 'tuple', components: [param] };
    expect(() => parseAbi([{ type: 'function', name: 'deep', inputs: [param] }])).toThrow(/nested deeper/);
  });

  it('canonicalizes aliases and function/fixed types in signatures', () => {
    const abi = parseAbi([
      { type: 'function', name: 'f', inputs: [{ name: 'a', type: 'uint' }, { name: 'b', type: 'int[]' }, { name: 'c', type: 'function' }, { name: 'd', type: 'fixed' }] },
    ]);
    const fn = [...abi.functions.values()][0];
    expect(fn.signature).toBe('f(uint256,int256[],function,fixed128x18)');
    expect(fn.inputs.map((p: AbiParameter) => p.canonical)).toEqual(['uint256', 'int256[]', 'function', 'fixed128x18']);
    // ethers canonicalizes the same way (viem's toFunctionSelector keeps 'uint' as written, so it is not the reference here).
    const iface = new Interface([{ type: 'function', name: 'f', inputs: [{ name: 'a', type: 'uint' }, { name: 'b', type: 'int[]' }], outputs: [] }]);
    const ours = [...parseAbi([{ type: 'function', name: 'f', inputs: [{ name: 'a', type: 'uint' }, { name: 'b', type: 'int[]' }] }]).functions.keys()][0];
    expect(ours).toBe(iface.getFunction('f')!.selector);
  });
});
