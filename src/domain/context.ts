// What an operation's `execute` receives: the repositories (bound to the activity's transaction),
// the target organization, who is calling, the clock and id source, and deployment services.
// Built once per request by the pipeline; domain code never reads headers or stamps.
import type { ApiKeyRow, OrganizationRow, Repositories, UserRow } from '../store/index.js';
import type { Barrier } from '../barrier/barrier.js';

export interface ApiKeyCredential {
  kind: 'api_key';
  apiKey: ApiKeyRow;
  scheme: string;
  signature: string;
}

export type CallerCredential = ApiKeyCredential;

export interface Caller {
  /** The organization the caller's credential lives in: the target or its parent. */
  organizationId: string;
  user: UserRow;
  credential: CallerCredential;
}

/** The deployment's own P-256 key (the analogue of the reference service's enclave key). */
export interface DeploymentSigner {
  /** Uncompressed SEC1 public key, lowercase hex (`04…`). */
  publicKey: string;
  /** ECDSA P-256/SHA-256 over `message`, DER. */
  sign(message: Uint8Array): Uint8Array;
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

export interface Services {
  barrier: Barrier;
  signer: DeploymentSigner;
  activities: ActivityReader;
}

export interface OperationContext {
  repos: Repositories;
  organization: OrganizationRow;
  caller: Caller;
  now: number;
  newId(): string;
  services: Services;
}

export interface ActivityContext extends OperationContext {
  activityId: string;
  activityType: string;
}
