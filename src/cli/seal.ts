// The seal a command opens the deployment with, from SIGIL_SEAL (docs/operator-guide.md "Custody"): static and
// pkcs11 open by themselves; shamir needs its operators' shares, which only a serving process
// collects (`sigil operator unseal`), so commands that need the data key refuse it clearly.
import { loadMasterKey } from '../barrier/master-key.js';
import { pkcs11Seal } from '../barrier/pkcs11.js';
import { SealError, staticSeal, type OpenSeal } from '../barrier/seals.js';
import type { Config } from '../config/config.js';

/** The configured seal when it opens without operators (static, pkcs11). */
export function automaticSeal(config: Config): OpenSeal {
  switch (config.seal.type) {
    case 'static': {
      const key = loadMasterKey(config.dataDir, config.masterKey);
      try {
        return staticSeal(key);
      } finally {
        key.fill(0);
      }
    }
    case 'pkcs11':
      return pkcs11Seal(config.seal.pkcs11);
    case 'shamir':
      throw new SealError('this command needs the data key, and the shamir seal opens only in a serving process (sigil operator unseal)');
  }
}

/** Runs `use` with the configured automatic seal, forgetting its key material afterwards. */
export async function withAutomaticSeal<T>(config: Config, use: (seal: OpenSeal) => Promise<T>): Promise<T> {
  const seal = automaticSeal(config);
  try {
    return await use(seal);
  } finally {
    seal.close();
  }
}
