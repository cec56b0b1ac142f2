// Consensus operations (docs/reference/organizations.md): approve_activity and
// reject_activity vote on a waiting activity by its fingerprint (the pipeline applies the vote to
// its target), and update_root_quorum, which only the current root quorum can approve.
import { updateRootQuorum } from '../domain/governance/organizations.js';
import { defineActivity } from './define.js';

export const approveActivityOp = defineActivity<{ fingerprint: string }, Record<string, never>>({
  path: 'approve_activity',
  type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
  policy: { resource: 'ACTIVITY', action: 'APPROVE' },
  authorization: 'vote',
  voteSelection: 'VOTE_SELECTION_APPROVED',
  execute: async () => ({}),
});

export const rejectActivityOp = defineActivity<{ fingerprint: string }, Record<string, never>>({
  path: 'reject_activity',
  type: 'ACTIVITY_TYPE_REJECT_ACTIVITY',
  policy: { resource: 'ACTIVITY', action: 'REJECT' },
  authorization: 'vote',
  voteSelection: 'VOTE_SELECTION_REJECTED',
  execute: async () => ({}),
});

export const updateRootQuorumOp = defineActivity<{ threshold: number; userIds: string[] }, Record<string, never>>({
  path: 'update_root_quorum',
  type: 'ACTIVITY_TYPE_UPDATE_ROOT_QUORUM',
  result: 'updateRootQuorumResult',
  policy: { resource: 'ORGANIZATION', action: 'UPDATE' },
  authorization: 'root_quorum_only',
  execute: async (ctx, p) => {
    await updateRootQuorum(ctx, p.threshold, p.userIds);
    return {};
  },
});
