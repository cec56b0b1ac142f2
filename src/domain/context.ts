// What an operation's `execute` receives: the repositories (bound to the activity's transaction),
// the target organization, who is calling, the clock and id source, and deployment services.
// Built once per request by the pipeline; domain code never reads headers or stamps.
import type { ApiKeyRow, AuthenticatorRow, OrganizationRow, Repositories, UserRow } from '../store/index.js';
import type { Barrier } from '../barrier/barrier.js';
import type { P256Signer } from '../crypto/p256.js';
import type { AppProofKey } from '../crypto/app-proofs.js';
import type { Broadcasting } from './keys/broadcasting.js';
import type { SolanaSends } from './keys/solana-sends.js';

export interface ApiKeyCredential {
  kind: 'api_key';
  apiKey: ApiKeyRow;
  scheme: string;
  signature: string;
}

/** A passkey (X-Stamp-Webauthn) whose assertion over the body verified. */
export interface WebauthnCredential {
  kind: 'webauthn';
  authenticator: AuthenticatorRow;
  /** The scheme a vote cast with this credential records. */
  scheme: typeof WEBAUTHN_VOTE_SCHEME;
  /** What a vote records as its signature: the X-Stamp-Webauthn value, verifiable against the message. */
  signature: string;
}

export const WEBAUTHN_VOTE_SCHEME = 'SIGNATURE_SCHEME_TK_API_WEBAUTHN';

/**
 * An X-Stamp-Attested key (turnkey-contract.md §1.4): a P-256 key an OTP verification token or an
 * OIDC id_token vouches for. It may only log in (stamp_login), which then registers it.
 */
export interface AttestedCredential {
  kind: 'attested';
  publicKey: string;
  scheme: string;
  signature: string;
}

export type CallerCredential = ApiKeyCredential | WebauthnCredential | AttestedCredential;

/** The public key a credential is known by in votes and policies (`credential.public_key`). */
export function credentialPublicKey(credential: CallerCredential): string {
  switch (credential.kind) {
    case 'api_key':
      return credential.apiKey.public_key;
    case 'webauthn':
      return credential.authenticator.credential_public_key;
    case 'attested':
      return credential.publicKey;
  }
}

export interface Caller {
  /** The organization the caller's credential lives in: the target or its parent. */
  organizationId: string;
  user: UserRow;
  credential: CallerCredential;
}


/** Reads activity records as the API shows them; implemented by src/activity, injected here. */
export interface ActivityReader {
  /** `viewer`: the reading request, whose user's canApprove/canReject the records show. */
  get(organizationId: string, activityId: string, viewer: OperationContext): Promise<Record<string, unknown> | undefined>;
  list(
    organizationId: string,
    opts: { limit: number; before?: string; after?: string; statuses?: string[]; types?: string[] },
    viewer: OperationContext,
  ): Promise<Record<string, unknown>[]>;
}

/** A message to a user (src/delivery): plain text only; `to` is an email address or an E.164 number. */
export interface OutgoingMessage {
  channel: 'email' | 'sms';
  to: string;
  subject?: string;
  text: string;
  /**
   * Email only: the sender the request asked for (sendFromEmailAddress, sendFromEmailSenderName,
   * replyToEmailAddress). Delivery honours it only for domains the deployment allows.
   */
  sender?: { address?: string; name?: string; replyTo?: string };
  /**
   * Email only: the organization the message is sent for and what it is (OTP, EMAIL_AUTH,
   * EMAIL_RECOVERY, INVITATION). With both, delivery reports each step as an EmailEvent.
   */
  organizationId?: string;
  kind?: string;
}

/**
 * One step of an email's delivery (list_email_events; swagger v1EmailEvent): `Send` when the SMTP
 * conversation starts, then `Delivery` (the server took it) or `Bounce` (it refused, or no server
 * answered). Carries addresses and the server's answer, never the message's subject or text.
 */
export interface EmailEvent {
  organizationId: string;
  messageId: string;
  eventType: 'Send' | 'Delivery' | 'Bounce';
  kind: string;
  from: string;
  to: string;
  at: number;
  details: Record<string, string>;
}

/** Sends messages to users; resolves once the message is handed over, rejects when it could not be. */
export interface Delivery {
  send(message: OutgoingMessage): Promise<void>;
}

/**
 * Verifies OIDC id_tokens (src/auth/oidc.ts): signature by a trusted issuer's key (or this
 * deployment's signer for its own tokens), expiry, one audience, and with `nonceForPublicKey` the
 * `nonce`/`tknonce` binding to that key (turnkey-semantics.md §6 "OAuth / OIDC"). Refusals are
 * SigilErrors with turnkeyErrorCode INVALID_OIDC_TOKEN.
 */
export interface OidcVerifier {
  verify(
    idToken: string,
    opts: { nonceForPublicKey?: string },
  ): Promise<{ issuer: string; audience: string; subject: string; claims: Record<string, unknown> }>;
}

/** Webhook endpoints' outside world (src/delivery/webhook-http.ts, src/domain/governance/webhook-dispatcher.ts). */
export interface WebhookServices {
  /** Resolves when `url` may receive webhooks; rejects with the reason it may not. */
  checkDestination(url: string): Promise<void>;
  /** Events were committed: the dispatcher looks for them now rather than at its next poll. */
  wake(): void;
}

export interface Services {
  barrier: Barrier;
  /** The deployment's own P-256 key (the analogue of the reference service's enclave key). */
  signer: P256Signer;
  activities: ActivityReader;
  settings: {
    importBundleTtlMs: number;
    /** Relying party id and allowed origins for passkey registration and assertions. */
    webauthn: { rpId: string; origins: string[] };
    /** `iss` of the id_tokens this deployment issues itself (oauth2_authenticate), signed by `signer`. */
    oidcSelfIssuer: string;
    /** Token and user-info endpoints of the OAuth2-only providers (oauth2_authenticate). */
    oauth2Endpoints: Record<'OAUTH2_PROVIDER_X' | 'OAUTH2_PROVIDER_DISCORD', { tokenUrl: string; userinfoUrl: string }>;
    /** Where browsers reach the dashboard; invitation emails link to its accept page. */
    dashboardUrl?: string;
    /** How long an invitation's link can be accepted; INVITATION_TTL_MS when absent. */
    invitationTtlMs?: number;
  };
  /** This process's ephemeral app-proof key (never stored). */
  appProofKey: AppProofKey;
  /** OIDC id_token verification for OAuth login and OIDC-attested stamps. */
  oidc: OidcVerifier;
  /** Email and SMS to users (OTP codes); absent in processes that send none. */
  delivery?: Delivery;
  /** Broadcasting and tracking of EVM transactions (eth_send_transaction); absent in processes that send none. */
  broadcasting?: Broadcasting;
  /** Broadcasting and tracking of Solana transactions (sol_send_transaction); absent in processes that send none. */
  solanaSends?: SolanaSends;
  /** Webhook destinations and the dispatcher; absent in processes that deliver none (the CLI). */
  webhooks?: WebhookServices;
}

export interface OperationContext {
  repos: Repositories;
  organization: OrganizationRow;
  caller: Caller;
  now: number;
  newId(): string;
  services: Services;
  /** The request's client IP address (after trusted proxies); absent when unknown. */
  clientAddress?: string;
  /** Queries only: the clock of velocity control windows (a test clock when one is configured; else `now`). */
  velocityNow?: () => number;
}

export interface ActivityContext extends OperationContext {
  activityId: string;
  activityType: string;
  /**
   * The activity's fingerprint (its idempotency key): what an effect outside the database (a
   * broadcast transaction) is keyed by, so two identical submissions racing each other cause it once.
   */
  fingerprint?: string;
}
