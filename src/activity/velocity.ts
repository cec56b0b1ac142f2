// Decisions that count (docs/velocity-controls.md "Velocity controls"; the rules are
// src/domain/keys/velocity-limits.ts): an activity is measured against the velocity controls its
// organization's policies read, decided, and counted as one step, so two activities cannot both pass
// a limit that only one of them fits under.
import { loadCompiledPolicies } from '../domain/governance/policies.js';
import { controlsOf, measure, needsReservation, reserve, type Measurement, type Reservation } from '../domain/keys/velocity-limits.js';
import { SigilError } from '../errors/errors.js';
import type { Repositories, Store } from '../store/index.js';
import { decide, ownContexts, type Decision, type DecisionInput } from './authorize.js';

/** Measure-decide-reserve rounds before a submission gives up (each lost round means a control flipped). */
const VELOCITY_ATTEMPTS = 20;

/** The velocity controls the deciding organization's policies read (compiled policies are cached). */
async function controlsRead(repos: Repositories, organizationId: string): Promise<Set<string>> {
  const reading = new Set<string>();
  for (const p of await loadCompiledPolicies(repos, organizationId)) for (const c of p.controls) reading.add(c);
  return reading;
}

export class VelocityDecisions {
  constructor(
    private readonly store: Store,
    /** The clock of velocity control windows (a test clock when one is configured); defaults to the request's time. */
    private readonly clock?: () => number,
  ) {}

  /**
   * The decision on a submission, with its velocity control counts reserved when it is allowed. An
   * organization with no controls, whose policies read none, costs nothing here: both lists come
   * from the read cache.
   */
  async decideAndReserve(input: DecisionInput): Promise<{ decision: Decision; reservation?: Reservation }> {
    const orgId = input.org.id;
    const reading = await controlsRead(input.repos, orgId);
    if (reading.size === 0 && (await controlsOf(input.repos, orgId)).length === 0) return { decision: await decide(input) };
    const contexts = await ownContexts(input);
    for (let attempt = 0; attempt < VELOCITY_ATTEMPTS; attempt++) {
      const at = this.clock?.() ?? input.now;
      const m = (await measure({ cached: input.repos, repos: this.store.repos, organizationId: orgId, type: input.type, userId: input.submitter.user.id, contexts, reading, at }))!;
      const decision = await decide({ ...input, contexts: contexts.map((c, i) => ({ ...c, controls: m.controls[i] })) });
      if (decision.outcome !== 'allow' || !needsReservation(m)) return { decision };
      // Not synced on its own: the activity's record, committed after it in the same log, is, and
      // the answer waits for that (a crash before then loses a reservation nobody was answered on).
      const reservation = await this.store.transaction((tx) => reserve(tx, orgId, m), { durable: false });
      if (reservation !== 'changed') return { decision, reservation };
    }
    throw new SigilError('CONFLICT', 'the velocity controls this activity is judged by kept changing while it was decided; submit it again');
  }

  /** Inside a transaction: the velocity controls of a deciding vote, measured with their groups locked. */
  async measureLocked(input: DecisionInput): Promise<{ measurement: Measurement; contexts: DecisionInput['contexts'] } | undefined> {
    const orgId = input.org.id;
    const reading = await controlsRead(input.repos, orgId);
    const contexts = await ownContexts(input);
    const at = this.clock?.() ?? input.now;
    const m = await measure({ cached: input.repos, repos: input.repos, organizationId: orgId, type: input.type, userId: input.submitter.user.id, contexts, reading, at, lock: true });
    if (!m) return undefined;
    return { measurement: m, contexts: contexts.map((c, i) => ({ ...c, controls: m.controls[i] })) };
  }
}
