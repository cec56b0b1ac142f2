// What a transaction does, as a simulation against the chain's latest state reports it: the asset
// changes of every address involved, the approvals it grants, what it deploys or delegates and
// whether it reverts. One shape for every chain, so the decoded view (`decodedView.simulation`), the
// policy keywords (`simulation.*`) and the dashboard's approval card read the same thing; the chain
// modules that fill it and the rules are in docs/policies.md "Simulation before approval".

/** An asset as the chain names it. Amounts are base units (wei, lamports, token units) as decimal strings. */
export interface SimulatedAsset {
  kind: 'native' | 'erc20' | 'erc721' | 'erc1155' | 'spl';
  /** The token contract (EVM, checksummed) or mint (Solana); absent for the native asset. */
  contract?: string;
  /** ERC-721 / ERC-1155 token id, decimal. */
  tokenId?: string;
  /** From the chain where it answers (ERC-20 `symbol()`/`decimals()`, the SPL mint), else absent. */
  symbol?: string;
  decimals?: number;
}

/** One movement of an asset from one address to another. */
export interface SimulatedTransfer {
  asset: SimulatedAsset;
  from: string;
  to: string;
  /** Base units, decimal string (1 for an ERC-721 token). */
  amount: string;
}

/** A right to move an owner's assets, granted by the transaction (approve, permit, setApprovalForAll, SPL delegate). */
export interface SimulatedApproval {
  asset: SimulatedAsset;
  owner: string;
  spender: string;
  /** Base units, decimal string; `unlimited` for the maximum allowance or an approval for all. */
  amount: string;
  /** Whether the grant revokes instead (amount 0, approval for all set false). */
  revoked: boolean;
  via: 'approve' | 'permit' | 'setApprovalForAll' | 'delegate';
}

/** The net change of one asset for one address the signer holds. */
export interface SimulatedBalanceChange {
  address: string;
  asset: SimulatedAsset;
  /** Signed base units, decimal string: negative is an outflow. */
  delta: string;
}

export interface AssetChanges {
  /**
   * `SIMULATED`: the fields below are what the chain answered.
   * `NOT_SIMULATED`: no simulation ran (`reason` says why: no RPC configured for the chain, a
   *   format that cannot be simulated); the other fields are empty.
   * `FAILED`: a simulation was attempted and did not answer (timeout, node error, `reason`); a policy
   *   that reads `simulation.*` is then an error, never a silent pass.
   */
  status: 'SIMULATED' | 'NOT_SIMULATED' | 'FAILED';
  reason?: string;
  chain: 'ethereum' | 'solana';
  /** The EVM chain id (decimal) or the Solana cluster named in the configuration. */
  network: string;
  /** The block (EVM number) or slot (Solana) the state was read at, decimal. */
  block?: string;
  /** When the simulation ran, ISO 8601. */
  simulatedAt?: string;
  reverted: boolean;
  revertReason?: string;
  transfers: SimulatedTransfer[];
  approvals: SimulatedApproval[];
  /** Net change per asset of every address the transaction touches that the organization holds. */
  balanceChanges: SimulatedBalanceChange[];
  /** Contracts the transaction deploys. */
  deployments: string[];
  /** EIP-7702 delegations it sets: authority → delegate. */
  delegations: { authority: string; delegate: string }[];
}
