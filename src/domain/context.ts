// What an operation's `execute` receives: the repositories (bound to the activity's transaction),
// the target organization, who is calling, the clock and id source, and deployment services.
// Built once per request by the pipeline; domain code never reads headers or stamps.
import type { ApiKeyRow, AuthenticatorRow, OrganizationRow, Repositories, UserRow } from '../store/index.js';
import type { Barrier } from '../barrier/barrier.js';
import type { P256Signer } from '../crypto/p256.js';
import type { AppProofKey } from '../crypto/app-proofs.js';

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

export type CallerCredential = ApiKeyCredential | WebauthnCredential;

/** The public key a credential is known by in votes and policies (`credential.public_key`). */
export function credentialPublicKey(credential: CallerCredential): string {
  return credential.kind === 'api_key' ? credential.apiKey.public_key : credential.authenticator.credential_public_key;
}

export interface Caller {
  /** The organization the caller's credential lives in: the target or its parent. */
  organizationId: string;
  user: UserRow;
  credential: CallerCredential;
}


/** Reads activity records as the API shows them; implemented by src/activity, injected here. */
export interface ActivityReader {
  get(organizationId: string, activityId: string, viewer: Caller): Promise<Record<string, unknown> | undefined>;
  list(
    organizationId: string,
    opts: { limit: number; before?: string; after?: string; statuses?: string[]; types?: string[] },
    viewer: Caller,
  ): Promise<Record<string, unknown>[]>;
}

/** A message to a user (src/delivery): plain text only; `to` is an email address or an E.164 number. */
export interface OutgoingMessage {
  channel: 'email' | 'sms';
  to: string;
  subject?: string;
  text: string;
}

/** Sends messages to users; resolves once the message is handed over, rejects when it could not be. */
export interface Delivery {
  send(message: OutgoingMessage): Promise<void>;
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
  };
  /** This process's ephemeral app-proof key (never stored). */
  appProofKey: AppProofKey;
  /** Email and SMS to users (OTP codes); absent in processes that send none. */
  delivery?: Delivery;
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
}

export interface ActivityContext extends OperationContext {
  activityId: string;
  activityType: string;
}
