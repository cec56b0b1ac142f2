// What a waiting transaction does, on the approval card (docs/policies.md "Simulation before
// approval", "On the approval card"): the server's `decodedView.simulation` in plain words, one line
// per effect ("This sends 1,200 USDC from your wallet … to …", "Grants unlimited approval of USDC to
// …", "Deploys a contract at …", "Sets a delegation of … to …", "Reverts: …"), the net change of each
// of the organization's addresses, and the block or slot and time it was simulated at; or, plainly,
// that no simulation ran (or that it failed) and why. Everything in it is chain data (token symbols
// come from the token's own contract), so it goes in as text only (../dom.ts `h`), never as markup.
import { facts, formatUnits, h, mono, time } from '../dom.js';

/** The shape the server serves (the shared asset changes of a simulation), as this client reads it. */
export interface SimulationAsset {
  kind: 'native' | 'erc20' | 'erc721' | 'erc1155' | 'spl' | string;
  contract?: string;
  tokenId?: string;
  symbol?: string;
  decimals?: number;
}
export interface SimulationView {
  status: 'SIMULATED' | 'NOT_SIMULATED' | 'FAILED' | string;
  reason?: string;
  chain: 'ethereum' | 'solana' | string;
  network: string;
  block?: string;
  simulatedAt?: string;
  reverted?: boolean;
  revertReason?: string;
  transfers?: { asset: SimulationAsset; from: string; to: string; amount: string }[];
  approvals?: { asset: SimulationAsset; owner: string; spender: string; amount: string; revoked?: boolean; via?: string }[];
  balanceChanges?: { address: string; asset: SimulationAsset; delta: string }[];
  deployments?: string[];
  delegations?: { authority: string; delegate: string }[];
}

type Line = (string | HTMLElement)[];

/** The asset's name: its symbol, the chain's coin, or its contract (token id for an NFT). */
function assetName(asset: SimulationAsset, chain: string): string {
  if (asset.kind === 'native') return asset.symbol ?? (chain === 'solana' ? 'SOL' : 'ETH');
  const name = asset.symbol ?? `token ${asset.contract ?? '(unknown contract)'}`;
  return asset.tokenId !== undefined ? `${name} #${asset.tokenId}` : name;
}

/** "1,200 USDC"; an ERC-721 token is itself the amount. */
function amountOf(amount: string, asset: SimulationAsset, chain: string): string {
  if (asset.kind === 'erc721') return assetName(asset, chain);
  const known = asset.decimals !== undefined;
  return `${formatUnits(amount, asset.decimals)} ${known ? '' : 'base units of '}${assetName(asset, chain)}`;
}

const place = (chain: string, network: string, block?: string) =>
  chain === 'solana' ? `slot ${block ?? '?'} of Solana ${network}` : `block ${block ?? '?'} of chain ${network}`;

function when(iso?: string): string {
  const ms = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(ms) ? time({ seconds: String(Math.floor(ms / 1000)) }) : 'an unknown time';
}

/** The lines of a simulation that ran. */
function effects(sim: SimulationView, ours: { has(address: string): boolean }): Line[] {
  const chain = sim.chain;
  const lines: Line[] = [];
  if (sim.reverted) lines.push(['Reverts: ', sim.revertReason || 'no reason given', '. If sent, it fails and only the fee is paid.']);
  for (const t of sim.transfers ?? []) {
    const amount = amountOf(t.amount, t.asset, chain);
    if (ours.has(t.from)) lines.push([`This sends ${amount} from your wallet `, mono(t.from), ' to ', mono(t.to)]);
    else if (ours.has(t.to)) lines.push([`Your wallet `, mono(t.to), ` receives ${amount} from `, mono(t.from)]);
    else lines.push([`Moves ${amount} from `, mono(t.from), ' to ', mono(t.to)]);
  }
  for (const a of sim.approvals ?? []) {
    const name = assetName(a.asset, chain);
    const by = a.via === 'permit' ? ' (by a permit signature)' : '';
    if (a.revoked) lines.push([`Revokes the approval of ${name} to `, mono(a.spender), by]);
    else if (a.amount === 'unlimited') lines.push([`Grants unlimited approval of ${a.via === 'setApprovalForAll' ? `all ${name}` : name} to `, mono(a.spender), by]);
    else lines.push([`Grants approval of ${amountOf(a.amount, a.asset, chain)} to `, mono(a.spender), by]);
  }
  for (const d of sim.deployments ?? []) lines.push(['Deploys a contract at ', mono(d)]);
  for (const d of sim.delegations ?? []) lines.push(['Sets a delegation of ', mono(d.authority), ' to ', mono(d.delegate)]);
  return lines;
}

/** The simulation part of an approval card; undefined when the server sent none (raw payloads, older servers). */
export function simulationPanel(sim: SimulationView | undefined): HTMLElement | undefined {
  if (!sim || typeof sim !== 'object') return undefined;
  const heading = h('h3', {}, 'What it does (simulated)');
  if (sim.status !== 'SIMULATED') {
    const failed = sim.status === 'FAILED';
    return h(
      'div',
      { className: `simulation simulation-none${failed ? ' simulation-failed' : ''}`, 'data-simulation': sim.status, role: failed ? 'alert' : 'note' },
      heading,
      h('p', {}, h('strong', {}, failed ? 'The simulation failed: ' : 'No simulation ran: '), sim.reason || 'no reason given', '.'),
      h('p', { className: 'hint' }, 'What this transaction does has not been checked against the chain; only what it says is shown above.'),
    );
  }
  // The organization's addresses are those with a net change; EVM addresses compare without their checksum case.
  const key = (a: string) => (sim.chain === 'ethereum' ? a.toLowerCase() : a);
  const held = new Set((sim.balanceChanges ?? []).map((b) => key(b.address)));
  const ours = { has: (a: string) => held.has(key(a)) };
  const lines = effects(sim, ours);
  const list = lines.length
    ? h('ul', { className: 'simulation-effects' }, lines.map((l, i) => h('li', { className: i === 0 && sim.reverted ? 'simulation-reverted' : '' }, ...l)))
    : h('p', {}, 'The simulation shows no asset changes.');
  const net = (sim.balanceChanges ?? []).map(
    (b): [string, (HTMLElement | string)[]] => ['Net change', [mono(b.address), ` ${b.delta.startsWith('-') ? '' : '+'}${amountOf(b.delta, b.asset, sim.chain)}`]],
  );
  return h(
    'div',
    { className: `simulation${sim.reverted ? ' simulation-reverts' : ''}`, 'data-simulation': sim.status },
    heading,
    list,
    net.length ? facts(net) : null,
    h('p', { className: 'hint' }, `Simulated against ${place(sim.chain, sim.network, sim.block)} at ${when(sim.simulatedAt)}. The chain may change before the transaction lands.`),
  );
}
