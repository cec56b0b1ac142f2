// Operations are data (docs/design.md "An operation is data"): each declares its path segment, type
// values, result member, what the policy engine sees, which fields are secret, and a thin `execute`.
// The pipeline reads these fields; it never branches on an operation's name.
import type { ActivityContext, Caller, OperationContext, Prepared } from '../domain/context.js';
import type { AppProofFact } from '../domain/keys/app-proofs.js';
import type { AssetChanges } from '../domain/keys/simulation.js';
import type { PolicyContext } from '../policy/index.js';

/** How an activity is authorized before the policy engine has its say (docs/reference/policies.md "Evaluation of one policy"). */
export type Authorization =
  /** Root quorum, or a policy that allows it. */
  | 'policy'
  /** Only the root quorum may run it; no policy can allow it (update_root_quorum, update_organization_name…). */
  | 'root_quorum_only'
  /** A vote on another activity (approve_activity, reject_activity): allowed to members of the organization. */
  | 'vote';

/** An older type value whose parameters or result member differ from the current version's. */
export interface TypeAlias {
  type: string;
  /**
   * Parameter definitions accepted under this type instead of its own intent definition: clients
   * send some older type values with a newer body (@turnkey/core's ACTIVITY_TYPE_VERIFY_OTP).
   */
  parameters?: string[];
  /** The v1Result member this version answers under. */
  result?: string;
  /** Brings this version's parameters to the shape `execute` takes (defaults for later fields). */
  adapt?: (params: any) => any;
  /** Brings `execute`'s result to the shape of this version's result member, when they differ. */
  adaptResult?: (result: any) => any;
  /**
   * Not an older version but another spelling of the current type (a client's misspelling): the
   * activity is recorded, and judged by policies, under the current type, so a policy naming that
   * type cannot be sidestepped by the spelling.
   */
  spelling?: boolean;
}

export interface ActivityDeclaration<P = any, R = any, L = any> {
  kind: 'activity';
  /** Path segment under /public/v1/submit/. */
  path: string;
  /** The current type value, verbatim. Its intent member and parameter schema follow by convention. */
  type: string;
  /**
   * Older type values still accepted on this path (docs/reference/api.md "Activities"). A plain string
   * shares the current type's result member and parameter handling; an object says how the older
   * version differs.
   */
  aliases?: (string | TypeAlias)[];
  /** The v1Result member the result is returned under; votes have none. */
  result?: string;
  /** What the policy engine sees as activity.resource / activity.action. */
  policy: { resource: string; action: string };
  authorization?: Authorization;
  /** A vote's selection (authorization 'vote'): what approve_activity and reject_activity cast. */
  voteSelection?: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED';
  /** `activity.params` as policies see them (docs/reference/policies.md "Keywords" (`activity.params`)). */
  policyParams?: (params: P) => Record<string, unknown>;
  /**
   * The keywords this activity populates for policies: wallet, private_key, eth.tx… (docs/reference/policies.md "Evaluation of one policy": keyword
   * population). A list means the activity is judged once per element, each as its single
   * counterpart would be (sign_raw_payloads: one per payload), and it is allowed only when every
   * element is.
   */
  policyContext?: (ctx: OperationContext, params: P, loaded: L) => Promise<PolicyContext | PolicyContext[]>;
  /**
   * The target the activity acts on (docs/design.md "An operation is data"): the signing key or account,
   * the parsed transaction, the send built for signing. Run once per submission, and once per vote
   * that decides it, outside any transaction; its result is what `policyContext` (so the policy, the
   * session scope, MFA policies and velocity controls), `prepare` and `execute` all see, so the bytes
   * a policy judged are the bytes signed by construction.
   */
  load?: (ctx: OperationContext, params: P) => Promise<L>;
  /**
   * `load` asks a chain's node (a send built with the node's gas, fees and nonce): reads never run
   * it, so a waiting activity's canApprove is shown without the consensus check that would need it.
   */
  loadCallsNode?: boolean | ((ctx: OperationContext, params: P) => boolean);
  /**
   * What the loaded target was simulated to do (docs/policies.md "Simulation before approval"):
   * recorded with the activity when a simulation ran, so approvers see what it was at submission.
   */
  simulation?: (loaded: L) => AssetChanges | undefined;
  /**
   * The address derivations this activity's app proofs state when the submission sets
   * generateAppProofs (every activity also gets the proof of its policy outcome).
   */
  appProofFacts?: (ctx: ActivityContext, params: P, result: R) => AppProofFact[];
  /** Users may manage their own credentials unless a policy says otherwise (docs/reference/policies.md "Evaluation of one policy" implicit exceptions). */
  selfService?: (caller: Caller, params: P) => boolean;
  /**
   * The activity gives a user a credential that can stamp as `method` (an MFA authentication type; an
   * OAuth identity counts as the sessions it logs in to):
   * while that user has MFA policies, it must itself meet the first of them such a credential could
   * meet (src/domain/identity/mfa-policies.ts matchingMfaPolicy). `userId` names the user (undefined:
   * the caller's own, or none known).
   */
  addsCredential?: { method: 'AUTHENTICATION_TYPE_PASSKEY' | 'AUTHENTICATION_TYPE_API_KEY' | 'AUTHENTICATION_TYPE_SESSION'; userId: (caller: Caller, params: P) => string | undefined };
  /**
   * Parameter fields holding bearer secrets (src/operations/secret-fields.ts), by path
   * (`clientSignature.signature`, `rootUsers[].oauthProviders[].oidcToken`): replaced by `<redacted>` in the
   * stored intent, and the vote keeps the body's fingerprint instead of the body. The registry
   * refuses to start when the schema has a secret field not declared here.
   */
  secretFields?: string[];
  /**
   * Result fields holding bearer secrets (a verification token, an OIDC token): the submitter reads
   * them in the submit response; the stored result, and so get_activity, shows `<redacted>`.
   */
  resultSecretFields?: string[];
  /**
   * The authentication activities that target a sub-organization's users (docs/reference/organizations.md
   * "Sub-organizations": parent-org users run auth activities that target sub-org users; the server actions of
   * @turnkey/sdk-server): a credential of the parent organization may submit them to the
   * sub-organization. The parent's root quorum and policies decide (they are the submitter's), and
   * the activity is recorded in the sub-organization, where its effects are. Every other activity
   * stays refused to a parent's credential. A function adds a condition of its own, throwing a
   * SigilError that says why when the submission does not meet it.
   */
  parentOrganizationMaySubmit?: true | ((ctx: OperationContext, params: P) => Promise<void>);
  /**
   * Login activities: when the stamp's credential is not in the target organization or its parent,
   * look for it in the target's sub-organizations and run there (docs/reference/sessions.md "Login activities").
   */
  credentialMayBeInSubOrganization?: boolean;
  /**
   * Login activities only: an X-Stamp-Attested key (an OTP verification token or an OIDC id_token
   * vouching for it) may submit it (docs/reference/api.md "Stamps"). Everything else refuses such stamps.
   */
  acceptsAttestedStamp?: boolean;
  /**
   * 'transactional' (default): execute writes through the activity's transaction.
   * 'pure': execute runs outside the activity's transaction (signing, OTP checks); its result is
   * recorded afterwards in a grouped commit, so the slow part never holds the write lock. A pure
   * activity that fails records no activity; any write it makes itself (an OTP attempt spent
   * before comparing) is a single self-contained statement that must survive that failure.
   */
  execution?: 'transactional' | 'pure';
  /**
   * Activities whose work is a slow part that only reads (key derivation, PBKDF2) followed by writes
   * that need no further reads: `prepare` runs outside any transaction with the request's reads and
   * returns the result with its `writes`, which join the grouped commit recording the activity, so
   * no lock is held across the crypto (create_wallet). `execute` still serves the approval path.
   */
  prepare?: (ctx: ActivityContext, params: P, loaded: L) => Promise<Prepared<R>>;
  /** Signing and auth activities answer COMPLETED in the submit response itself. */
  execute(ctx: ActivityContext, params: P, loaded: L): Promise<R>;
}

export interface QueryDeclaration<B = any, R = any> {
  kind: 'query';
  /** Path segment under /public/v1/query/. */
  path: string;
  /** The swagger request definition, or an inline JSON schema for paths the swagger lacks. */
  request: string | Record<string, unknown>;
  /**
   * The swagger response definition, or an inline JSON schema, for a path the bundled swagger lacks
   * (src/schemas/turnkey-paths.json names the others'); the OpenAPI document states it (src/operations/openapi.ts).
   */
  response?: string | Record<string, unknown>;
  execute(ctx: OperationContext, body: B): Promise<R>;
}

export type Declaration = ActivityDeclaration | QueryDeclaration;

export function defineActivity<P, R, L = undefined>(d: Omit<ActivityDeclaration<P, R, L>, 'kind'>): ActivityDeclaration<P, R, L> {
  return { kind: 'activity', ...d };
}

export function defineQuery<B, R>(d: Omit<QueryDeclaration<B, R>, 'kind'>): QueryDeclaration<B, R> {
  return { kind: 'query', ...d };
}
