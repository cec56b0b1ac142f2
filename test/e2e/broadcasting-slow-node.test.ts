// A slow chain node must not hold the database (docs/broadcasting.md "What the node is trusted with"):
// approving a waiting eth_send_transaction asks the node for nonce, gas and fees, and that happens
// before the vote's transaction opens, so on SQLite (one writer) another organization's create_wallet is
// not held up while the node has not answered; reading the pending send's activity asks the node
// nothing. The node is anvil behind a small JSON-RPC proxy that counts the calls it forwards and can
// hold them (a gate) until the test lets them through: no timing is asserted, only the order of
// outcomes.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createTestClient, http, parseEther, parseGwei, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { httpClient, newKey, sdkServerClient } from '../helpers/clients.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { approve, twoApprovers } from '../helpers/approvals.js';

const CAIP2 = 'eip155:11155111';
/** anvil's first default account (its well-known development key), which signs the raw transaction. */
const ANVIL_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

/** A JSON-RPC proxy in front of anvil: counts the calls it forwards, and holds them while `held` is set. */
class SlowNode {
  calls: string[] = [];
  private server: Server;
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => undefined;
  /** Calls that arrived while the gate was shut and are waiting for it. */
  waiting = 0;
  private arrived: (() => void)[] = [];

  constructor(private readonly upstream: string) {
    this.server = createServer((req, res) => void this.forward(req, res));
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  shut(): void {
    this.gate = new Promise((r) => (this.open = r));
  }

  release(): void {
    this.open();
  }

  /** Resolves once a call is waiting at the shut gate. */
  held(): Promise<void> {
    return this.waiting > 0 ? Promise.resolve() : new Promise((r) => this.arrived.push(r));
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const parsed = JSON.parse(body);
    for (const call of [parsed].flat()) this.calls.push(call.method);
    this.waiting++;
    for (const f of this.arrived.splice(0)) f();
    await this.gate;
    this.waiting--;
    try {
      const answer = await fetch(this.upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.setHeader('content-type', 'application/json');
      res.end(await answer.text());
    } catch {
      // anvil stopped at the end of the run: the caller hears a gateway error.
      res.statusCode = 502;
      res.end();
    }
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

let anvil: Anvil;
let node: SlowNode;
let sigil: SigilInstance;
let orgId: string;
let from: Hex;

beforeAll(async () => {
  anvil = await startAnvil();
  node = new SlowNode(anvil.url);
  const url = await node.listen();
  sigil = await startSigil({ [`SIGIL_EVM_RPC_${anvil.chainId}`]: url, SIGIL_EVM_POLL_INTERVAL_MS: '100' });
  orgId = sigil.root.organizationId;
  const w = await sdkServerClient(sigil).createWallet({
    walletName: 'slow node',
    accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }],
  });
  from = w.addresses[0] as Hex;
  await createTestClient({ mode: 'anvil', transport: http(anvil.url) }).setBalance({ address: from, value: parseEther('10') });
}, 120_000);

afterAll(async () => {
  await sigil?.stop();
  await node?.close();
  await anvil?.stop();
});

describe('a slow chain node', () => {
  it('is not asked by reads of a waiting send, and an approval waiting on it holds no other organization up', async () => {
    const api = sdkServerClient(sigil);
    const {
      approvers: [{ key: aliceKey }, { key: carolKey }],
    } = await twoApprovers(sigil, ['slow alice', 'slow carol'], "activity.type == 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2' && eth.tx.value == 77");
    // Another organization, with its own root key.
    const otherKey = newKey();
    const other = await api.createSubOrganization({
      subOrganizationName: 'another tenant',
      rootUsers: [{ userName: 'other root', apiKeys: [{ apiKeyName: 'k', publicKey: otherKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    const to = '0x000000000000000000000000000000000000a77e' as Hex;
    const submitted = await httpClient(sigil, aliceKey).ethSendTransaction({
      type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
      timestampMs: String(Date.now()),
      organizationId: orgId,
      parameters: { from, caip2: CAIP2, calls: [{ to, value: '77' }] },
    } as never);
    expect(submitted.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');

    // Reads of the waiting send (by a user the consensus includes, whose canApprove is worked out) ask the node nothing.
    node.calls = [];
    const carol = httpClient(sigil, carolKey);
    const read = await carol.getActivity({ organizationId: orgId, activityId: submitted.activity.id });
    expect(read.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect(read.activity.canApprove).toBe(true);
    const listed = await carol.getActivities({ organizationId: orgId, filterByStatus: ['ACTIVITY_STATUS_CONSENSUS_NEEDED'] } as never);
    expect(listed.activities.map((a) => a.id)).toContain(submitted.activity.id);
    expect(node.calls).toEqual([]);

    // The node stops answering; carol's approval asks it for the send's nonce, gas and fees.
    node.shut();
    const approval = carol
      .approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: String(Date.now()), organizationId: orgId, parameters: { fingerprint: submitted.activity.fingerprint } })
      .then(
        () => 'approval' as const,
        (err) => `approval failed: ${err}` as const,
      );
    await node.held();
    // Meanwhile another organization creates a wallet: it completes while the approval still waits on the node.
    const wallet = sdkServerClient(sigil, otherKey, other.subOrganizationId)
      .createWallet({
        walletName: 'not held up',
        accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }],
      })
      .then(() => 'wallet' as const);
    expect(await Promise.race([wallet, approval])).toBe('wallet');
    expect(node.waiting).toBeGreaterThan(0);

    // The node answers again: the approval completes the send, which reaches the chain.
    node.release();
    expect(await approval).toBe('approval');
    const { activity } = await httpClient(sigil).getActivity({ organizationId: orgId, activityId: submitted.activity.id });
    expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const sendTransactionStatusId = (activity.result as any).ethSendTransactionResultV2.sendTransactionStatusId;
    await api.pollTransactionStatus({ sendTransactionStatusId, pollingIntervalMs: 100, timeoutMs: 120_000 } as never);
    expect(await createPublicClient({ transport: http(anvil.url) }).getBalance({ address: to })).toBe(77n);
  });

  it('an approved raw send is recorded without asking the node, and broadcast once the approval has committed', async () => {
    const {
      approvers: [{ key: aliceKey }, { key: carolKey }],
    } = await twoApprovers(sigil, ['raw alice', 'raw carol'], "activity.type == 'ACTIVITY_TYPE_ETH_SEND_RAW_TRANSACTION'");
    const chain = createPublicClient({ transport: http(anvil.url) });
    const account = privateKeyToAccount(ANVIL_KEY);
    const to = '0x000000000000000000000000000000000000ba11' as Hex;
    const nonce = await chain.getTransactionCount({ address: account.address, blockTag: 'pending' });
    const signedTransaction = await account.signTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce, to, value: 31n, gas: 21000n, maxFeePerGas: parseGwei('100'), maxPriorityFeePerGas: 1n });
    const submitted = await httpClient(sigil, aliceKey).ethSendRawTransaction({
      type: 'ACTIVITY_TYPE_ETH_SEND_RAW_TRANSACTION',
      timestampMs: String(Date.now()),
      organizationId: orgId,
      parameters: { signedTransaction, caip2: CAIP2 },
    } as never);
    expect(submitted.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    // The node does not answer while carol approves: the approval completes all the same.
    node.shut();
    node.calls = [];
    await approve(sigil, carolKey, submitted.activity.fingerprint);
    const { activity } = await httpClient(sigil).getActivity({ organizationId: orgId, activityId: submitted.activity.id });
    expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(node.calls).not.toContain('eth_sendRawTransaction');
    const { transactionHash } = (activity.result as any).ethSendRawTransactionResult;
    // The node answers again: the tracker hands the transaction over, and it is mined.
    node.release();
    const receipt = await chain.waitForTransactionReceipt({ hash: transactionHash as Hex, pollingInterval: 100, timeout: 120_000 });
    expect(receipt.status).toBe('success');
    expect(await chain.getBalance({ address: to })).toBe(31n);
  });
});
