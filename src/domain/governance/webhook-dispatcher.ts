// The webhook dispatcher: takes due rows from the outbox
// (src/store/repositories/webhooks.ts claims them under a lease, so across processes on one
// PostgreSQL each row is tried by one process at a time), signs and POSTs them
// (src/crypto/webhook-signature.ts, src/delivery/webhook-http.ts), and records the outcome.
//
// - At least once: a row is marked delivered only after its endpoint answered 2xx; a process killed
//   in between leaves a lease that expires, and the row is tried again.
// - Retries: a failed attempt is tried again after an exponential delay with jitter — the base
//   doubled per attempt up to a ceiling, a random half of it taken away, so receivers coming back
//   are not hit by every sender at once — until the attempts run out (20 by default: about twelve
//   hours). Network errors, timeouts, 5xx, 408 and 429 are retried; any other answer (3xx, 4xx) is
//   the receiver refusing the event, and it is not sent again (Turnkey: "3xx, 4xx ... are treated as
//   terminal delivery failures").
// - Order: the claim skips a row while an earlier row of its subject is pending (one activity's
//   events reach an endpoint in order).
// - Never in the API's way: it runs on its own timer with at most `concurrency` requests in flight,
//   each with a deadline; the request path only writes rows and calls `wake`.
// - Health: an endpoint whose attempts failed `failingAfter` times in a row is marked failing
//   (list_webhook_endpoints shows it) until one succeeds.
import { newId } from '../ids.js';
import type { Repositories, WebhookDeliveryRow } from '../../store/index.js';
import type { WebhookSigningKey } from '../../crypto/webhook-signature.js';
import { WEBHOOK_SIGNATURE_ALGORITHM, WEBHOOK_SIGNATURE_VERSION } from '../../crypto/webhook-signature.js';
import { postWebhook, type PostOutcome, type WebhookDestinations } from '../../delivery/webhook-http.js';

export interface WebhookDispatchSettings {
  /** Delay after the first failed attempt; doubled after each next one. */
  retryBaseMs: number;
  /** The longest delay between two attempts. */
  retryMaxMs: number;
  /** Attempts before an event is given up (marked dead). */
  maxAttempts: number;
  /** Deadline of one attempt, resolution included. */
  timeoutMs: number;
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** How often the outbox is looked at when nothing woke the dispatcher. */
  pollMs: number;
  /** Failed attempts in a row after which an endpoint is shown failing. */
  failingAfter: number;
}

/** How long delivered and given-up events stay in the outbox (list_webhook_endpoints counts them). */
export const HISTORY_MS = 7 * 24 * 3600_000;

/** What /metrics shows of the dispatcher. */
export interface WebhookDispatchStats {
  delivered: number;
  failedAttempts: number;
  abandoned: number;
  pending: number;
  oldestPendingAt: number | null;
}

/** The delay before attempt `attempts + 1`, jittered into its upper half. */
export function retryDelay(attempts: number, s: Pick<WebhookDispatchSettings, 'retryBaseMs' | 'retryMaxMs'>, random = Math.random): number {
  const full = Math.min(s.retryMaxMs, s.retryBaseMs * 2 ** Math.min(attempts - 1, 40));
  return Math.round(full / 2 + (random() * full) / 2);
}

function retryable(o: PostOutcome): boolean {
  if ('error' in o) return !o.refused;
  return o.status >= 500 || o.status === 408 || o.status === 429;
}

export class WebhookDispatcher {
  /** This process's name on the leases it takes. */
  private readonly owner = `dispatcher-${newId()}`;
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private pumping = false;
  /** The look at the outbox now running (its claim and metrics queries), if any. */
  private pumpRun: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private lastStateRead = 0;
  private lastSweep = 0;
  private readonly idle = new Set<() => void>();
  readonly stats: WebhookDispatchStats = { delivered: 0, failedAttempts: 0, abandoned: 0, pending: 0, oldestPendingAt: null };

  constructor(
    private readonly deps: {
      repos: Repositories;
      key: WebhookSigningKey;
      destinations: WebhookDestinations;
      settings: WebhookDispatchSettings;
      log?: (fields: Record<string, unknown>, message: string) => void;
    },
  ) {}

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Looks at the outbox now (events were just committed, or an attempt finished). */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pumpRun = this.pump();
  }

  /**
   * Stops claiming; resolves once the look at the outbox now running and the attempts in flight
   * have finished, or after `graceMs` (a shutdown must not wait for a slow receiver: an attempt cut
   * off is tried again once its lease expires, which at worst delivers it twice). The store is closed
   * after this: a claim still running then failed against a closed database (seen in the bench's
   * log: "webhook outbox claim failed: driver has already been destroyed" from a PostgreSQL process
   * it stopped).
   */
  async stop(graceMs = 2_000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    // The look ends at its next check of `stopped`; rows it claimed are attempted (they are leased to us).
    if (this.pumpRun) await Promise.race([this.pumpRun, grace]);
    if (this.inFlight > 0) await Promise.race([new Promise<void>((resolve) => this.idle.add(resolve)), grace]);
    clearTimeout(timer);
  }

  private schedule(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, this.deps.settings.pollMs);
    this.timer.unref();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      do {
        this.again = false;
        const free = this.deps.settings.concurrency - this.inFlight;
        if (free <= 0 || this.stopped) break;
        const now = Date.now();
        // Long enough for one attempt and its bookkeeping; a lease outliving its process expires.
        const leaseUntil = now + this.deps.settings.timeoutMs + 5_000;
        let rows: (WebhookDeliveryRow & { url: string })[] = [];
        try {
          rows = await this.deps.repos.webhooks.claim(this.owner, now, leaseUntil, free);
        } catch (err) {
          this.deps.log?.({ err }, 'webhook outbox claim failed');
        }
        for (const row of rows) {
          this.inFlight++;
          void this.attempt(row).finally(() => {
            this.inFlight--;
            if (this.stopped && this.inFlight === 0) for (const r of this.idle) r();
            this.wake();
          });
        }
        if (rows.length === free) this.again = true;
        await this.readState(now);
      } while (this.again && !this.stopped);
    } finally {
      this.pumping = false;
      this.schedule();
    }
  }

  /** The outbox's size and age for /metrics, read at most once a second. */
  private async readState(now: number): Promise<void> {
    if (now - this.lastStateRead < 1_000) return;
    this.lastStateRead = now;
    try {
      // Once a minute: rows whose endpoint is gone (src/store/migrations/023_webhooks.ts), and
      // finished rows older than the history kept.
      if (now - this.lastSweep >= 60_000) {
        this.lastSweep = now;
        await this.deps.repos.webhooks.deleteOrphans();
        await this.deps.repos.webhooks.deleteFinishedBefore(now - HISTORY_MS);
      }
      const s = await this.deps.repos.webhooks.outboxState();
      this.stats.pending = s.pending;
      this.stats.oldestPendingAt = s.oldestPendingAt;
    } catch {
      // Metrics only; the next read tries again.
    }
  }

  /** One attempt at one row: sign with a fresh timestamp, POST, record what happened. */
  private async attempt(row: WebhookDeliveryRow & { url: string }): Promise<void> {
    const { key, destinations, settings, repos } = this.deps;
    const body = Buffer.from(row.payload, 'utf8');
    const timestampMs = String(Date.now());
    const headers: Record<string, string> = {
      'x-turnkey-organization-id': row.organization_id,
      'x-turnkey-event-type': row.event_type,
      'x-turnkey-timestamp': timestampMs,
      'x-turnkey-webhook-version': '1',
      'x-turnkey-event-id': row.id,
      'x-turnkey-signature-key-id': key.keyId,
      'x-turnkey-signature-algorithm': WEBHOOK_SIGNATURE_ALGORITHM,
      'x-turnkey-signature-version': WEBHOOK_SIGNATURE_VERSION,
      'x-turnkey-signature': key.sign({ timestampMs, eventId: row.id, body }),
      'user-agent': 'sigil-webhooks/1',
    };
    const outcome = await postWebhook(destinations, row.url, headers, body, settings.timeoutMs);
    const now = Date.now();
    try {
      if ('status' in outcome && outcome.status >= 200 && outcome.status < 300) {
        await repos.webhooks.delivered(row.id, this.owner, now);
        await repos.webhooks.endpointSucceeded(row.endpoint_id, now);
        this.stats.delivered++;
        return;
      }
      const error = 'status' in outcome ? `the endpoint answered HTTP ${outcome.status}` : outcome.error;
      const last = !retryable(outcome) || row.attempts >= settings.maxAttempts;
      await repos.webhooks.failed(row.id, this.owner, error, last ? null : now + retryDelay(row.attempts, settings));
      await repos.webhooks.endpointFailed(row.endpoint_id, error, now, settings.failingAfter);
      this.stats.failedAttempts++;
      if (last) this.stats.abandoned++;
      this.deps.log?.({ deliveryId: row.id, endpointId: row.endpoint_id, attempts: row.attempts, error, abandoned: last }, 'webhook delivery failed');
    } catch (err) {
      // The lease expires and the row is tried again.
      this.deps.log?.({ err, deliveryId: row.id }, 'webhook delivery outcome not recorded');
    }
  }
}
