// Activity status values (swagger v1ActivityStatus) and which are final.
export const ActivityStatus = {
  CREATED: 'ACTIVITY_STATUS_CREATED',
  PENDING: 'ACTIVITY_STATUS_PENDING',
  COMPLETED: 'ACTIVITY_STATUS_COMPLETED',
  FAILED: 'ACTIVITY_STATUS_FAILED',
  CONSENSUS_NEEDED: 'ACTIVITY_STATUS_CONSENSUS_NEEDED',
  REJECTED: 'ACTIVITY_STATUS_REJECTED',
  AUTHENTICATORS_NEEDED: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
} as const;

export type ActivityStatusValue = (typeof ActivityStatus)[keyof typeof ActivityStatus];

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set([
  ActivityStatus.COMPLETED,
  ActivityStatus.FAILED,
  ActivityStatus.REJECTED,
]);
