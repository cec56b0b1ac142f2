// Transactions the decoded-approval tests (docs/policies.md "Approving what you see") submit, built with
// viem: an ERC-20 transfer of 1.5 tokens of a 6-decimal token, and a Safe execTransaction that
// delegatecalls a proxy's upgradeToAndCall (the upgrade hidden inside it). Unsigned serializations,
// 0x-prefixed.
import { encodeFunctionData, parseAbi, serializeTransaction } from 'viem';

export const TOKEN = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
export const ALICE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
export const SAFE = '0x1111111111111111111111111111111111111111';
export const PROXY = '0x2222222222222222222222222222222222222222';
export const EVIL = '0x3333333333333333333333333333333333333333';
export const ERC20_ABI = JSON.stringify([
  { type: 'function', name: 'transfer', stateMutability: 'nonpayable', inputs: [{ name: 'to', type: 'address' }, { name: 'amount', type: 'uint256' }], outputs: [{ name: '', type: 'bool' }] },
]);
const ZERO = '0x0000000000000000000000000000000000000000';
const fees = { chainId: 1, type: 'eip1559', maxFeePerGas: 30_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n } as const;

/** transfer(ALICE, 1_500_000) to TOKEN on chain 1. */
export const erc20Transfer = (nonce = 0) =>
  serializeTransaction({
    ...fees,
    to: TOKEN,
    nonce,
    gas: 60_000n,
    data: encodeFunctionData({ abi: parseAbi(['function transfer(address to, uint256 amount)']), functionName: 'transfer', args: [ALICE, 1_500_000n] }),
  });

/** SAFE.execTransaction(PROXY, 0, upgradeToAndCall(EVIL, 0x), operation 1 = delegatecall, …). */
export const safeHiddenUpgrade = (nonce = 1) =>
  serializeTransaction({
    ...fees,
    to: SAFE,
    nonce,
    gas: 200_000n,
    data: encodeFunctionData({
      abi: parseAbi(['function execTransaction(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas, uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, bytes signatures)']),
      functionName: 'execTransaction',
      args: [
        PROXY,
        0n,
        encodeFunctionData({ abi: parseAbi(['function upgradeToAndCall(address newImplementation, bytes data)']), functionName: 'upgradeToAndCall', args: [EVIL, '0x'] }),
        1,
        0n,
        0n,
        0n,
        ZERO,
        ZERO,
        '0x',
      ],
    }),
  });
