// Assets and balances of EVM chains (swagger: list_supported_assets → v1AssetMetadata,
// get_wallet_address_balances → v1AssetBalance; docs/broadcasting.md "Assets and balances").
//
// Sigil knows of the assets of a chain it has a JSON-RPC URL for: the chain's native asset
// (CAIP-19 `eip155:<id>/slip44:60`, named per well-known chain id) and the ERC-20 tokens the operator
// lists in SIGIL_EVM_ASSETS (`eip155:<id>/erc20:<address lower-case>`). Balances are read from the
// node at the latest block (eth_getBalance, and eth_call balanceOf per listed token). There is no
// price feed, so `display.usd` is never given; `display.crypto` is the balance in whole units.
import { EvmRpcError, type EvmRpc } from '../../delivery/evm-rpc.js';
import { SigilError, invalid } from '../../errors/errors.js';
import type { OperationContext } from '../context.js';
import { resolveSigningTarget } from './signing.js';
import { notSupported, unavailable, type Broadcasting } from './broadcasting.js';

/** v1AssetMetadata. */
export interface AssetMetadata {
  caip19: string;
  symbol: string;
  decimals: number;
  name: string;
  stable: boolean;
  logoUrl?: string;
}

/** v1AssetBalance. */
export interface AssetBalance {
  caip19: string;
  symbol: string;
  balance: string;
  decimals: number;
  name: string;
  display: { crypto: string };
}

/**
 * The native asset of the chain ids the API's caip2 list names; any other configured chain is taken
 * to use ether (docs/broadcasting.md "Assets and balances" says so). All are 18-decimal and, by CAIP-19 convention for EVM chains,
 * `slip44:60`.
 */
const NATIVE: Record<string, { symbol: string; name: string }> = {
  '1': { symbol: 'ETH', name: 'Ether' },
  '11155111': { symbol: 'ETH', name: 'Sepolia Ether' },
  '8453': { symbol: 'ETH', name: 'Ether' },
  '84532': { symbol: 'ETH', name: 'Sepolia Ether' },
  '10': { symbol: 'ETH', name: 'Ether' },
  '11155420': { symbol: 'ETH', name: 'Sepolia Ether' },
  '42161': { symbol: 'ETH', name: 'Ether' },
  '421614': { symbol: 'ETH', name: 'Sepolia Ether' },
  '137': { symbol: 'POL', name: 'Polygon Ecosystem Token' },
  '80002': { symbol: 'POL', name: 'Polygon Amoy POL' },
  '56': { symbol: 'BNB', name: 'BNB' },
  '97': { symbol: 'tBNB', name: 'BNB Chain Testnet BNB' },
  '143': { symbol: 'MON', name: 'Monad' },
  '10143': { symbol: 'MON', name: 'Monad Testnet MON' },
};

/** balanceOf(address): the ERC-20 read of a holder's balance. */
const BALANCE_OF = '0x70a08231';

/** The chain's RPC for an asset query: Solana is refused as unsupported, an unconfigured EVM chain by name. */
function evmChain(b: Broadcasting | undefined, caip2: string): { rpc: EvmRpc; chainId: string } {
  if (typeof caip2 === 'string' && caip2.startsWith('solana:')) throw notSupported(`assets and balances on Solana (${caip2.slice(0, 80)})`);
  if (!b) throw notSupported('assets and balances');
  const rpc = b.rpc(caip2);
  return { rpc, chainId: caip2.slice('eip155:'.length) };
}

/** list_supported_assets: the native asset, then the listed tokens in the operator's order. */
export function supportedAssets(b: Broadcasting | undefined, caip2: string): AssetMetadata[] {
  const { chainId } = evmChain(b, caip2);
  const native = NATIVE[chainId] ?? { symbol: 'ETH', name: 'Ether' };
  return [
    { caip19: `${caip2}/slip44:60`, symbol: native.symbol, decimals: 18, name: native.name, stable: false },
    ...b!.tokens(caip2).map((t) => ({
      caip19: `${caip2}/erc20:${t.address}`,
      symbol: t.symbol,
      decimals: t.decimals,
      name: t.name,
      stable: t.stable,
      ...(t.logoUrl ? { logoUrl: t.logoUrl } : {}),
    })),
  ];
}

/** `balance` (base units) in whole units, without trailing zeros: v1AssetBalanceDisplay.crypto. */
export function wholeUnits(balance: bigint, decimals: number): string {
  if (decimals === 0) return balance.toString();
  const digits = balance.toString().padStart(decimals + 1, '0');
  const fraction = digits.slice(-decimals).replace(/0+$/, '');
  return digits.slice(0, -decimals) + (fraction ? `.${fraction}` : '');
}

/**
 * get_wallet_address_balances: `address` must be an Ethereum address of a wallet account of the
 * organization (the swagger: private key addresses are not supported). Only non-zero balances.
 */
export async function walletAddressBalances(ctx: OperationContext, b: Broadcasting | undefined, address: string, caip2: string): Promise<AssetBalance[]> {
  const { rpc } = evmChain(b, caip2);
  if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address)) {
    throw invalid(`address must be the 0x-prefixed 20-byte hex address of a wallet account, got "${String(address).slice(0, 80)}"`);
  }
  const notAccount = () =>
    new SigilError('NOT_FOUND', `address ${address} is not an Ethereum address of a wallet account of this organization`);
  const target = await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, address).catch((err) => {
    throw err instanceof SigilError && err.turnkeyErrorCode === 'NOT_FOUND' ? notAccount() : err;
  });
  if (target.kind === 'private_key') throw invalid(`address ${address} is a private key address; balances are answered for wallet account addresses only`);
  if (target.curve !== 'CURVE_SECP256K1') throw notAccount();
  const holder = address.toLowerCase();
  const assets = supportedAssets(b, caip2);
  const tokens = b!.tokens(caip2);
  const amounts = await Promise.all([
    read(() => rpc.balance(holder), 'the native balance'),
    ...tokens.map((t) =>
      read(async () => {
        const answer = await rpc.call({ from: holder, to: t.address, data: BALANCE_OF + holder.slice(2).padStart(64, '0') }, 'latest');
        if (!/^0x[0-9a-fA-F]{64}/.test(answer)) {
          throw new SigilError('REQUEST_INVALID', `the token ${t.symbol} at ${t.address} answered no balance to balanceOf (is it an ERC-20 contract on ${caip2}? check SIGIL_EVM_ASSETS)`, { grpc: 9 });
        }
        return BigInt(answer.slice(0, 66));
      }, `the ${t.symbol} balance`),
    ),
  ]);
  return assets.flatMap((a, i) => {
    const amount = amounts[i];
    if (amount === 0n) return [];
    return [{ caip19: a.caip19, symbol: a.symbol, balance: amount.toString(), decimals: a.decimals, name: a.name, display: { crypto: wholeUnits(amount, a.decimals) } }];
  });
}

/** One node read; a node failure is the chain's RPC endpoint failing (code 14), naming what was read. */
async function read(fn: () => Promise<bigint>, what: string): Promise<bigint> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof SigilError) throw err;
    if (err instanceof EvmRpcError && err.code !== undefined) throw new SigilError('REQUEST_INVALID', `reading ${what} failed: ${err.message}`, { grpc: 9 });
    throw unavailable(err);
  }
}
