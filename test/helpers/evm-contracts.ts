// Small real contracts for the simulation tests (docs/policies.md "Simulation before approval"), as
// EVM runtime bytecode written here with a tiny assembler (no Solidity compiler is installed): an
// ERC-20 ("TKN", 18 decimals, open mint), an ERC-721 (open mint, setApprovalForAll), a Safe-like proxy
// whose execute(target, data) DELEGATECALLs, and a module whose pull(token, from, to, amount) calls
// the token's transferFrom and whose forward(to) passes its ETH on with an internal call. Installed
// with anvil_setCode; their state is read back with viem.
import { toFunctionSelector, toHex, type Hex } from 'viem';

const OPS: Record<string, number> = {
  STOP: 0x00, ADD: 0x01, SUB: 0x03, LT: 0x10, GT: 0x11, EQ: 0x14, ISZERO: 0x15, OR: 0x17, SHL: 0x1b, SHR: 0x1c, SHA3: 0x20,
  CALLER: 0x33, CALLVALUE: 0x34, CALLDATALOAD: 0x35, CALLDATACOPY: 0x37, CODECOPY: 0x39, RETURNDATASIZE: 0x3d, RETURNDATACOPY: 0x3e,
  POP: 0x50, MLOAD: 0x51, MSTORE: 0x52, SLOAD: 0x54, SSTORE: 0x55, JUMP: 0x56, JUMPI: 0x57, GAS: 0x5a, JUMPDEST: 0x5b,
  DUP1: 0x80, DUP2: 0x81, DUP3: 0x82, DUP4: 0x83, SWAP1: 0x90, SWAP2: 0x91, LOG3: 0xa3, LOG4: 0xa4,
  CALL: 0xf1, RETURN: 0xf3, DELEGATECALL: 0xf4, REVERT: 0xfd,
};

type Item = string | bigint | number;

/** Assembles opcodes, numbers (pushed), '@label' (a JUMPDEST) and '>label' (push the label's offset). */
export function asm(items: Item[]): Hex {
  const labels = new Map<string, number>();
  const emit = (resolve: boolean): number[] => {
    const out: number[] = [];
    for (const it of items) {
      if (typeof it === 'string' && it.startsWith('@')) {
        if (!resolve) labels.set(it.slice(1), out.length);
        out.push(OPS.JUMPDEST);
      } else if (typeof it === 'string' && it.startsWith('>')) {
        const at = labels.get(it.slice(1)) ?? 0;
        if (resolve && !labels.has(it.slice(1))) throw new Error(`no label ${it}`);
        out.push(0x61, at >> 8, at & 0xff);
      } else if (typeof it === 'string') {
        const op = OPS[it];
        if (op === undefined) throw new Error(`unknown opcode ${it}`);
        out.push(op);
      } else {
        const n = BigInt(it);
        let hex = n.toString(16);
        if (hex.length % 2) hex = '0' + hex;
        const bytes = Buffer.from(hex, 'hex');
        out.push(0x5f + bytes.length, ...bytes);
      }
    }
    return out;
  };
  emit(false);
  return toHex(Uint8Array.from(emit(true)));
}

const sel = (signature: string) => BigInt(toFunctionSelector(signature));
const arg = (i: number): Item[] => [4 + 32 * i, 'CALLDATALOAD'];
const TRANSFER = BigInt('0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
const APPROVAL = BigInt('0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925');
const APPROVAL_FOR_ALL = BigInt('0x17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31');
const returnWord = (value: Item[]): Item[] => [...value, 0, 'MSTORE', 32, 0, 'RETURN'];
/** keccak256(a ‖ b) of two words. */
const pairSlot = (a: Item[], b: Item[]): Item[] => [...a, 0, 'MSTORE', ...b, 32, 'MSTORE', 64, 0, 'SHA3'];
/** Reverts with Error(message) (message of at most 32 bytes). */
const revertWith = (message: string): Item[] => [
  BigInt('0x08c379a0') << 224n, 0, 'MSTORE', 32, 4, 'MSTORE', message.length, 36, 'MSTORE',
  BigInt('0x' + Buffer.from(message).toString('hex').padEnd(64, '0')), 68, 'MSTORE', 100, 0, 'REVERT',
];
const dispatch = (routes: [string, string][]): Item[] => [
  0, 'CALLDATALOAD', 224, 'SHR',
  ...routes.flatMap(([signature, label]) => ['DUP1', sel(signature), 'EQ', `>${label}`, 'JUMPI']),
  0, 0, 'REVERT',
];

/** balance[from] -= amount (Error "insufficient balance" if short); balance[to] += amount; Transfer(from, to, amount). */
const moveTokens = (from: Item[], to: Item[], amount: Item[]): Item[] => [
  ...from, 'SLOAD', ...amount, 'DUP2', 'DUP2', 'GT', '>poor', 'JUMPI',
  'SWAP1', 'SUB', ...from, 'SSTORE',
  ...to, 'SLOAD', ...amount, 'ADD', ...to, 'SSTORE',
  ...amount, 0, 'MSTORE', ...to, ...from, TRANSFER, 32, 0, 'LOG3',
];

export const ERC20_RUNTIME = asm([
  ...dispatch([
    ['transfer(address,uint256)', 'transfer'],
    ['transferFrom(address,address,uint256)', 'transferFrom'],
    ['approve(address,uint256)', 'approve'],
    ['balanceOf(address)', 'balanceOf'],
    ['allowance(address,address)', 'allowance'],
    ['symbol()', 'symbol'],
    ['decimals()', 'decimals'],
    ['mint(address,uint256)', 'mint'],
  ]),
  '@transfer', ...moveTokens(['CALLER'], arg(0), arg(1)), ...returnWord([1]),
  '@transferFrom',
  ...pairSlot(arg(0), ['CALLER']), 'DUP1', 'SLOAD', ...arg(2), 'DUP2', 'DUP2', 'GT', '>stingy', 'JUMPI',
  'SWAP1', 'SUB', 'SWAP1', 'SSTORE',
  ...moveTokens(arg(0), arg(1), arg(2)), ...returnWord([1]),
  '@approve', ...arg(1), ...pairSlot(['CALLER'], arg(0)), 'SSTORE', ...arg(1), 0, 'MSTORE', ...arg(0), 'CALLER', APPROVAL, 32, 0, 'LOG3', ...returnWord([1]),
  '@balanceOf', ...returnWord([...arg(0), 'SLOAD']),
  '@allowance', ...returnWord([...pairSlot(arg(0), arg(1)), 'SLOAD']),
  '@symbol', 32, 0, 'MSTORE', 3, 32, 'MSTORE', BigInt('0x' + Buffer.from('TKN').toString('hex').padEnd(64, '0')), 64, 'MSTORE', 96, 0, 'RETURN',
  '@decimals', ...returnWord([18]),
  '@mint', ...arg(0), 'SLOAD', ...arg(1), 'ADD', ...arg(0), 'SSTORE', ...arg(1), 0, 'MSTORE', ...arg(0), 0, TRANSFER, 32, 0, 'LOG3', 'STOP',
  '@poor', ...revertWith('insufficient balance'),
  '@stingy', ...revertWith('insufficient allowance'),
]);

/** Owners live at tokenId + 2^160, clear of any address-keyed slot. */
const OWNER_BASE = 1n << 160n;

export const ERC721_RUNTIME = asm([
  ...dispatch([
    ['mint(address,uint256)', 'mint'],
    ['transferFrom(address,address,uint256)', 'transferFrom'],
    ['ownerOf(uint256)', 'ownerOf'],
    ['setApprovalForAll(address,bool)', 'setApprovalForAll'],
    ['isApprovedForAll(address,address)', 'isApprovedForAll'],
  ]),
  '@mint', ...arg(0), ...arg(1), OWNER_BASE, 'ADD', 'SSTORE', ...arg(1), ...arg(0), 0, TRANSFER, 0, 0, 'LOG4', 'STOP',
  // owner == from, and the caller is the owner or one of its operators.
  '@transferFrom', ...arg(2), OWNER_BASE, 'ADD', 'SLOAD', ...arg(0), 'EQ', 'ISZERO', '>denied', 'JUMPI',
  ...arg(0), 'CALLER', 'EQ', ...pairSlot(arg(0), ['CALLER']), 'SLOAD', 'OR', 'ISZERO', '>denied', 'JUMPI',
  ...arg(1), ...arg(2), OWNER_BASE, 'ADD', 'SSTORE', ...arg(2), ...arg(1), ...arg(0), TRANSFER, 0, 0, 'LOG4', 'STOP',
  '@ownerOf', ...returnWord([...arg(0), OWNER_BASE, 'ADD', 'SLOAD']),
  '@setApprovalForAll', ...arg(1), ...pairSlot(['CALLER'], arg(0)), 'SSTORE', ...arg(1), 0, 'MSTORE', ...arg(0), 'CALLER', APPROVAL_FOR_ALL, 32, 0, 'LOG3', 'STOP',
  '@isApprovedForAll', ...returnWord([...pairSlot(arg(0), arg(1)), 'SLOAD']),
  '@denied', ...revertWith('not owner nor operator'),
]);

/** Reverts with the last call's return data. */
const bubble: Item[] = ['@bubble', 'RETURNDATASIZE', 0, 0, 'RETURNDATACOPY', 'RETURNDATASIZE', 0, 'REVERT'];

/** execute(address target, bytes data): DELEGATECALL target with data (a Safe with operation 1). */
export const PROXY_RUNTIME = asm([
  ...dispatch([['execute(address,bytes)', 'execute']]),
  '@execute',
  36, 'CALLDATALOAD', 4, 'ADD', 'DUP1', 'CALLDATALOAD', 'DUP1', 'DUP3', 32, 'ADD', 0, 'CALLDATACOPY',
  0, 0, 'DUP3', 0, ...arg(0), 'GAS', 'DELEGATECALL', 'ISZERO', '>bubble', 'JUMPI', 'STOP',
  ...bubble,
]);

/** pull(token, from, to, amount): token.transferFrom(from, to, amount); forward(to): sends its msg.value on. */
export const MODULE_RUNTIME = asm([
  ...dispatch([
    ['pull(address,address,address,uint256)', 'pull'],
    ['forward(address)', 'forward'],
  ]),
  '@pull',
  sel('transferFrom(address,address,uint256)') << 224n, 0, 'MSTORE', ...arg(1), 4, 'MSTORE', ...arg(2), 36, 'MSTORE', ...arg(3), 68, 'MSTORE',
  0, 0, 100, 0, 0, ...arg(0), 'GAS', 'CALL', 'ISZERO', '>bubble', 'JUMPI', 'STOP',
  '@forward', 0, 0, 0, 0, 'CALLVALUE', ...arg(0), 'GAS', 'CALL', 'ISZERO', '>bubble', 'JUMPI', 'STOP',
  ...bubble,
]);

/** Init code that deploys `runtime` (CODECOPY it from after itself, RETURN it). */
export function deployCode(runtime: Hex): Hex {
  const size = (runtime.length - 2) / 2;
  // PUSH2 size, PUSH1 offset, PUSH1 0, CODECOPY, PUSH2 size, PUSH1 0, RETURN: 14 bytes.
  const prefix = `0x61${size.toString(16).padStart(4, '0')}600e60003961${size.toString(16).padStart(4, '0')}6000f3`;
  return (prefix + runtime.slice(2)) as Hex;
}
