// A webhook receiver on loopback for the sending tests (docs/broadcasting.md "Statuses"): an endpoint
// of the root organization subscribed to SEND_TRANSACTION_STATUS_UPDATES, whose every delivery is
// checked with @turnkey/crypto's verifyTurnkeyWebhookSignature against the key Sigil publishes at
// /.well-known/sigil.json. Accepted events are kept in arrival order; a bad signature is counted and
// answered 401.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyTurnkeyWebhookSignature } from '@turnkey/crypto';
import type { SigilInstance } from './sigil.js';
import { httpClient } from './clients.js';

export interface SendEvents {
  /** SEND_TRANSACTION_STATUS_UPDATES payloads whose signature verified, in arrival order. */
  events: any[];
  /** Deliveries whose signature did not verify. */
  badSignatures(): number;
  close(): Promise<void>;
}

export async function receiveSendEvents(sigil: SigilInstance): Promise<SendEvents> {
  const { webhookVerificationKey: key } = await (await fetch(`${sigil.url}/.well-known/sigil.json`)).json();
  const events: any[] = [];
  let bad = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const check = verifyTurnkeyWebhookSignature({ headers: req.headers as Record<string, string>, body, verificationKeys: [key], maxTimestampAgeMs: 5 * 60_000 });
      if (!check.ok) bad++;
      else if (req.headers['x-turnkey-event-type'] === 'SEND_TRANSACTION_STATUS_UPDATES') events.push(JSON.parse(body.toString('utf8')));
      res.statusCode = check.ok ? 200 : 401;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const hook = await httpClient(sigil).createWebhookEndpoint({
    type: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT',
    timestampMs: String(Date.now()),
    organizationId: sigil.root.organizationId,
    parameters: { name: 'transactions', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tx`, subscriptions: [{ eventType: 'SEND_TRANSACTION_STATUS_UPDATES' }] },
  } as never);
  if (hook.activity.status !== 'ACTIVITY_STATUS_COMPLETED') throw new Error(`the webhook endpoint was not created: ${hook.activity.status}`);
  return {
    events,
    badSignatures: () => bad,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
