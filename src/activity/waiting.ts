// An activity waiting for approvals or authenticators (docs/policies.md "Policies and approvals",
// docs/mfa.md), judged again as its submitter's: its sealed parameters opened, its submitter found
// from the vote it was submitted with. Votes decide on it through this, and reads use the same rule
// to show canApprove only to users whose vote would count.
import type { Barrier } from '../barrier/barrier.js';
import type { OperationContext } from '../domain/context.js';
import type { ActivityDeclaration } from '../operations/define.js';
import type { ActivityTypeBinding } from '../operations/registry.js';
import type { ActivityRow, Repositories, VoteRow } from '../store/index.js';
import { includedInConsensus, loaderOf, type DecisionInput, type Loaded } from './authorize.js';
import { PENDING_AT, voteOf } from './recording.js';
import { submitterOf } from './submitter.js';
import type { Caller } from '../domain/context.js';
import { openForOrganization } from '../domain/keys/organization-keys.js';

/** An activity type's operation: its declaration and how its type value binds to it. */
export interface Operation {
  decl: ActivityDeclaration;
  binding: ActivityTypeBinding;
}

/** The operation a recorded activity type runs (the registry's `byType`). */
export type OperationOf = (type: string) => Operation | undefined;

export type WaitingInput = DecisionInput & { params: Record<string, unknown>; submitter: Caller };

export class WaitingActivities {
  constructor(
    private readonly operationOf: OperationOf,
    private readonly barrier: Barrier,
  ) {}

  /** The parameters a waiting activity was submitted with (sealed while it waits). */
  async parametersOf(repos: Repositories, target: ActivityRow): Promise<Record<string, unknown>> {
    return JSON.parse((await openForOrganization(this.barrier, repos, target.organization_id, target.pending_parameters!, PENDING_AT(target.id))).toString('utf8'));
  }

  /**
   * A waiting activity judged as its submitter's, with its sealed parameters opened and `votes` so
   * far; its target is `loaded` when given (a vote loads it before its transaction), else loaded on use.
   */
  async input(repos: Repositories, target: ActivityRow, decl: ActivityDeclaration, base: Omit<OperationContext, 'repos'>, votes: VoteRow[], loaded?: Loaded): Promise<WaitingInput> {
    const params = await this.parametersOf(repos, target);
    const submitter = await submitterOf(repos, target, votes);
    const hookContext = { ...base, caller: submitter, repos };
    return { repos, decl, type: target.type, org: base.organization, submitter, params, votes, now: base.now, hookContext, loaded: loaded ?? loaderOf(decl, hookContext, params) };
  }

  /**
   * For reads (canApprove/canReject, the dashboard's Pending page): whether the reading user is
   * included in the consensus of `target`, waiting for it, as a vote by them would find now. The same
   * rule a vote applies, read outside a transaction; the vote itself checks again under its lock.
   */
  async mayVote(target: ActivityRow, votes: VoteRow[], ctx: OperationContext): Promise<boolean> {
    const operation = this.operationOf(target.type);
    if (!operation || !target.pending_parameters || ctx.caller.organizationId !== target.organization_id) return false;
    // Reads never ask a chain's node: an activity whose target needs it (a send) keeps the record's
    // own canApprove, and the vote itself is judged in full.
    const callsNode = operation.decl.loadCallsNode;
    if (callsNode === true) return true;
    try {
      if (typeof callsNode === 'function' && callsNode(ctx, await this.parametersOf(ctx.repos, target))) return true;
      const input = await this.input(ctx.repos, target, operation.decl, ctx, votes);
      return await includedInConsensus({ ...input, voter: voteOf(target.id, ctx.caller, 'VOTE_SELECTION_APPROVED', '', ctx.now) });
    } catch {
      // A submitter's credential gone, say: a vote would be refused too.
      return false;
    }
  }
}
