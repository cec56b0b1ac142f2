// Request rate limits (docs/reference/api.md "Limits"; docs/operator-guide.md): a token bucket per
// organization and one per credential, taken right after the caller is known, for submissions and
// queries alike. The buckets live in the database (src/store/repositories/rate-limits.ts), so every
// process on it shares them; taking a token is one statement per request, and none at all when no
// limit is configured (config.rateLimits, off by default).
//
//  - An organization's bucket is its own: a sub-organization does not draw on its parent's (the
//    reference's "10 RPS per sub-organization regardless of tier"), so the reference's variant
//    "this sub-organization cannot execute activities because its parent has been rate limited"
//    never arises here.
//  - A credential's bucket is per public key (API key or passkey) within the organization holding it;
//    the reference limits per client IP, which a deployment behind a load balancer cannot rely on.
//    The auth proxy's own key, which stamps on behalf of every end user it serves, has none.
//  - Refused: HTTP 429, gRPC 8, RATE_LIMIT_EXCEEDED, with the reference's messages: the organization's
//    `this organization cannot execute activities because it has been rate limited. …` (its
//    trailer, which sends the reader to Turnkey's support, is replaced by advice that holds here), the
//    credential's `Too many requests. Please wait and try again in a few seconds`. No activity is
//    recorded (the HTTP layer audits the refusal like any other). Every answer carries
//    `ratelimit-limit` (the bucket's burst) and `ratelimit-remaining` of the tighter bucket; a
//    refusal adds `retry-after` (seconds).
//  - Signups through the auth proxy have a bucket per client address (takeSignup; on by default,
//    SIGIL_AUTH_PROXY_SIGNUPS_PER_HOUR): the endpoint takes no credential, and each signup creates an
//    organization with keys of its own.
import type { Config, RateLimit } from '../config/config.js';
import { credentialPublicKey, type Caller } from '../domain/context.js';
import { SigilError } from '../errors/errors.js';
import type { OrganizationRow, Store } from '../store/index.js';

export const ORGANIZATION_RATE_LIMITED_MESSAGE =
  'this organization cannot execute activities because it has been rate limited. Please wait and try again in a few seconds.';
export const TOO_MANY_REQUESTS_MESSAGE = 'Too many requests. Please wait and try again in a few seconds';
export const SIGNUP_RATE_LIMITED_MESSAGE = 'Too many signups from this address. Please wait and try again later';

// Idle buckets refill to full and are then the same as absent; removing them once a minute keeps
// the table at about one row per recently active organization and credential.
const PRUNE_EVERY_MS = 60_000;

interface Bucket {
  bucket: string;
  limit: RateLimit;
  message: string;
}

export class RateLimiter {
  private nextPruneAt = 0;
  private readonly idleMs: number;

  constructor(
    private readonly store: Store,
    private readonly limits: Config['rateLimits'],
  ) {
    const refillMs = [limits.organization, limits.apiKey, limits.signup].map((l) => (l ? (l.burst / l.rps) * 1000 : 0));
    this.idleMs = Math.max(PRUNE_EVERY_MS, ...refillMs);
  }

  /**
   * Takes a token from the organization's and the credential's buckets and writes the rate-limit
   * headers of the answer into `headersOut` (none when no limit is configured); throws 429 when a
   * bucket is empty. `perCredential: false` skips the credential's bucket.
   */
  async take(
    organization: OrganizationRow,
    caller: Caller,
    now: number,
    headersOut: Record<string, string>,
    opts: { perCredential: boolean } = { perCredential: true },
  ): Promise<void> {
    const orgLimit = this.limits.organization;
    const keyLimit = opts.perCredential ? this.limits.apiKey : undefined;
    if (!orgLimit && !keyLimit) return;
    const buckets: Bucket[] = [];
    if (orgLimit) buckets.push({ bucket: `org:${organization.id}`, limit: orgLimit, message: ORGANIZATION_RATE_LIMITED_MESSAGE });
    if (keyLimit) {
      buckets.push({ bucket: `key:${caller.organizationId}:${credentialPublicKey(caller.credential)}`, limit: keyLimit, message: TOO_MANY_REQUESTS_MESSAGE });
    }
    await this.takeBuckets(buckets, now, headersOut);
  }

  /**
   * Takes a token from the bucket of signups through the auth proxy from `clientAddress` (the
   * request's address, after trusted proxies), shared by every configuration: each signup creates an
   * organization, and anyone may ask for one. Throws 429 when it is empty.
   */
  async takeSignup(clientAddress: string, now: number, headersOut: Record<string, string>): Promise<void> {
    const limit = this.limits.signup;
    if (!limit) return;
    await this.takeBuckets([{ bucket: `signup:${clientAddress}`, limit, message: SIGNUP_RATE_LIMITED_MESSAGE }], now, headersOut);
  }

  private async takeBuckets(buckets: Bucket[], now: number, headersOut: Record<string, string>): Promise<void> {
    const states = await this.store.repos.rateLimits.take(
      buckets.map((b) => ({ bucket: b.bucket, rate: b.limit.rps, burst: b.limit.burst })),
      now,
    );
    this.prune(now);
    const taken = buckets.map((b) => {
      const state = states.find((s) => s.bucket === b.bucket);
      if (!state) throw new Error(`rate limit bucket ${b.bucket} was not returned`);
      return { ...b, ...state };
    });
    const refused = taken.find((t) => !t.allowed);
    const shown = refused ?? taken.reduce((a, b) => (b.tokens < a.tokens ? b : a));
    headersOut['ratelimit-limit'] = String(shown.limit.burst);
    headersOut['ratelimit-remaining'] = String(Math.max(0, Math.floor(shown.tokens)));
    if (refused) {
      headersOut['retry-after'] = String(Math.max(1, Math.ceil((1 - refused.tokens) / refused.limit.rps)));
      throw new SigilError('RATE_LIMIT_EXCEEDED', refused.message);
    }
  }

  /** Removes idle buckets at most once a minute per process, off the request's path. */
  private prune(now: number): void {
    if (now < this.nextPruneAt) return;
    this.nextPruneAt = now + PRUNE_EVERY_MS;
    // Losing a prune costs nothing but a larger table until the next one.
    this.store.repos.rateLimits.prune(now - this.idleMs).catch(() => undefined);
  }
}
