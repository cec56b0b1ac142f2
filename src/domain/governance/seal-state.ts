// The deployment's emergency seal (docs/operator-guide.md "Custody"): one `meta` row every process reads every
// SIGIL_SEAL_WATCH_MS, so `sigil operator seal` reaches all processes of a PostgreSQL deployment
// within about that time. Each seal or lift bumps a generation, so a process tells a new seal from
// one it has already obeyed (and an operator's unseal of it) without a row per process.
import type { SealRecord } from '../../barrier/seals.js';
import type { Repositories, Store } from '../../store/index.js';
import { META } from './deployment.js';

const KEY = 'barrier.emergency_seal';

export interface EmergencySealState {
  sealed: boolean;
  generation: number;
  at?: number;
  by?: string;
}

export async function emergencySealState(repos: Repositories): Promise<EmergencySealState> {
  const text = await repos.meta.get(KEY);
  return text ? (JSON.parse(text) as EmergencySealState) : { sealed: false, generation: 0 };
}

/** Seals (or lifts the seal of) the whole deployment; a compare-and-set, so two operators never lose a generation. */
export async function setEmergencySeal(store: Store, sealed: boolean, by: string, now: number): Promise<EmergencySealState> {
  for (;;) {
    const done = await store.transaction(async (repos) => {
      const current = await repos.meta.get(KEY);
      const before: EmergencySealState = current ? JSON.parse(current) : { sealed: false, generation: 0 };
      const next: EmergencySealState = { sealed, generation: before.generation + 1, at: now, by };
      if (current === undefined) await repos.meta.insert(KEY, JSON.stringify(next));
      else if (!(await repos.meta.replace(KEY, current, JSON.stringify(next)))) return undefined;
      return next;
    });
    if (done) return done;
  }
}

/**
 * Seal migration and rekey: the same data key, wrapped by another seal, in one compare-and-set of the
 * wrapped key with the seal record, so two migrations racing cannot leave a key nobody holds. Nothing
 * sealed with the data key changes, and running processes, which hold it unwrapped, serve on.
 */
export async function replaceSeal(store: Store, expectedWrapped: string, wrapped: string, record: SealRecord): Promise<void> {
  const swapped = await store.transaction(async (repos) => {
    if (!(await repos.meta.replace(META.wrappedDataKey, expectedWrapped, wrapped))) return false;
    const current = await repos.meta.get(META.seal);
    if (current === undefined) await repos.meta.insert(META.seal, JSON.stringify(record));
    else await repos.meta.replace(META.seal, current, JSON.stringify(record));
    return true;
  });
  if (!swapped) throw new Error('the stored data key changed during the migration (another migration or rotation at the same time?); nothing was changed, run it again');
}
