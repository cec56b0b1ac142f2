// Stopping the webhook dispatcher (src/domain/governance/webhook-dispatcher.ts) before the store
// closes: stop() must wait for the look at the outbox now running, or its claim runs against a
// database that shutdown has already closed. The repositories here are stand-ins whose claim answers
// only when the test says so, so the order is observed, not timed.
import { describe, expect, it } from 'vitest';
import { WebhookDispatcher, type WebhookDispatchSettings } from '../../src/domain/governance/webhook-dispatcher.js';
import type { Repositories } from '../../src/store/index.js';
import type { WebhookSigningKey } from '../../src/crypto/webhook-signature.js';
import type { WebhookDestinations } from '../../src/delivery/webhook-http.js';

const SETTINGS: WebhookDispatchSettings = { retryBaseMs: 1000, retryMaxMs: 60_000, maxAttempts: 3, timeoutMs: 1000, concurrency: 4, pollMs: 60_000, failingAfter: 5 };

function dispatcherWithHeldClaim() {
  let answerClaim!: () => void;
  let claimStarted!: () => void;
  const started = new Promise<void>((resolve) => (claimStarted = resolve));
  const queries: string[] = [];
  const webhooks = {
    claim: () =>
      new Promise<never[]>((resolve) => {
        queries.push('claim');
        claimStarted();
        answerClaim = () => {
          queries.push('claim answered');
          resolve([]);
        };
      }),
    outboxState: async () => {
      queries.push('outbox state');
      return { pending: 0, oldestPendingAt: null };
    },
    deleteOrphans: async () => undefined,
    deleteFinishedBefore: async () => undefined,
  };
  const dispatcher = new WebhookDispatcher({
    repos: { webhooks } as unknown as Repositories,
    key: {} as WebhookSigningKey,
    destinations: {} as WebhookDestinations,
    settings: SETTINGS,
  });
  return { dispatcher, started, answer: () => answerClaim(), queries };
}

describe('webhook dispatcher stop', () => {
  it('resolves only after the claim in progress has answered, and claims nothing after', async () => {
    const { dispatcher, started, answer, queries } = dispatcherWithHeldClaim();
    dispatcher.start();
    await started;
    let stopped = false;
    const stopping = dispatcher.stop(30_000).then(() => {
      stopped = true;
      queries.push('stopped');
    });
    // Nothing but the held claim can let stop() resolve before its 30 s grace.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 20));
    expect(stopped).toBe(false);
    answer();
    await stopping;
    expect(queries[0]).toBe('claim');
    expect(queries.indexOf('claim answered')).toBeLessThan(queries.indexOf('stopped'));
    // Once stopped, a wake does not look at the outbox again.
    const before = queries.length;
    dispatcher.wake();
    await new Promise((r) => setTimeout(r, 20));
    expect(queries.length).toBe(before);
  });

  it('resolves at once when nothing is running', async () => {
    const { dispatcher } = dispatcherWithHeldClaim();
    await dispatcher.stop(30_000);
  });
});
