// Master-key rotation (docs/operator-guide.md, `sigil rotate-master-key`; docs/design.md "Security model": the
// master key only wraps the data key). Rotation re-wraps the one data key under a new master key in a
// single compare-and-set of the stored wrapped key: secrets sealed with the data key stay as they are,
// so running processes, which hold the unwrapped data key, serve on without a restart.
import { Barrier } from '../../barrier/barrier.js';
import type { Store } from '../../store/index.js';
import { META } from './deployment.js';

async function wrappedDataKey(store: Store): Promise<string> {
  const wrapped = await store.repos.meta.get(META.wrappedDataKey);
  if (!wrapped) throw new Error('this deployment is not initialized: run "sigil init" first');
  return wrapped;
}

/** True when `masterKey` unseals the deployment's data key as stored now. */
export async function masterKeyOpens(store: Store, masterKey: Buffer): Promise<boolean> {
  const wrapped = await wrappedDataKey(store);
  try {
    Barrier.unseal(masterKey, wrapped);
    return true;
  } catch {
    return false;
  }
}

/**
 * Re-wraps the data key from `oldMasterKey` to `newMasterKey`. The update only applies if the stored
 * wrapped key is still the one read here, so two rotations racing cannot leave a key nobody holds.
 */
export async function rewrapDataKey(store: Store, oldMasterKey: Buffer, newMasterKey: Buffer): Promise<void> {
  const wrapped = await wrappedDataKey(store);
  const rewrapped = Barrier.rewrap(oldMasterKey, newMasterKey, wrapped);
  const swapped = await store.transaction((repos) => repos.meta.replace(META.wrappedDataKey, wrapped, rewrapped));
  if (!swapped) {
    throw new Error('the stored data key changed during the rotation (another rotate-master-key at the same time?); nothing was changed, run it again');
  }
}
