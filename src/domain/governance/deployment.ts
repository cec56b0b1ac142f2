// The deployment: what `sigil init` creates once (barrier data key, the deployment signer key, the
// root organization with its root user and API key, the root quorum) and what `sigil serve` loads.
// All of init's writes happen in one transaction, so a failed init leaves nothing behind, and the
// `root_organization_id` fact makes a second init refuse without changing anything.
import { newId } from '../ids.js';
import { generateP256KeyPair, P256Signer } from '../../crypto/p256.js';
import { Barrier } from '../../barrier/barrier.js';
import { parseSealRecord, SealError, type OpenSeal, type SealRecord } from '../../barrier/seals.js';
import type { Repositories, Store } from '../../store/index.js';

export const META = {
  rootOrganizationId: 'root_organization_id',
  wrappedDataKey: 'barrier.wrapped_data_key',
  /** Which seal wraps the data key (a SealRecord as JSON); absent on deployments made before seals: static. */
  seal: 'barrier.seal',
  signerPublicKey: 'deployment_signer.public_key',
  signerPrivateKey: 'deployment_signer.private_key',
} as const;

const SIGNER_LOCATION = { table: 'meta', rowId: META.signerPrivateKey, column: 'value' };

export interface InitResult {
  organizationId: string;
  userId: string;
  apiKeyId: string;
  apiPublicKey: string;
  apiPrivateKey: string;
  signerPublicKey: string;
}

export async function isInitialized(repos: Repositories): Promise<boolean> {
  return (await repos.meta.get(META.rootOrganizationId)) !== undefined;
}

export async function initializeDeployment(
  store: Store,
  custody: { seal: OpenSeal; record: SealRecord },
  opts: { organizationName?: string; userName?: string; now?: number } = {},
): Promise<InitResult> {
  const now = opts.now ?? Date.now();
  const dataKey = Barrier.newDataKey();
  const barrier = Barrier.fromDataKey(dataKey);
  const wrappedDataKey = custody.seal.wrap(dataKey);
  dataKey.fill(0);
  const signer = generateP256KeyPair();
  const apiKey = generateP256KeyPair();
  const organizationId = newId();
  const userId = newId();
  const apiKeyId = newId();
  await store.transaction(async (repos) => {
    // Inserting the root-organization fact first makes a concurrent second init fail on the key.
    await repos.meta.insert(META.rootOrganizationId, organizationId);
    await repos.meta.insert(META.wrappedDataKey, wrappedDataKey);
    await repos.meta.insert(META.seal, JSON.stringify(custody.record));
    await repos.meta.insert(META.signerPublicKey, Buffer.from(signer.publicKeyUncompressed).toString('hex'));
    await repos.meta.insert(META.signerPrivateKey, barrier.seal(signer.privateKey, SIGNER_LOCATION));
    await repos.organizations.insert({
      id: organizationId,
      name: opts.organizationName ?? 'Root organization',
      parent_organization_id: null,
      root_quorum_threshold: 1,
      created_at: now,
      updated_at: now,
    });
    await repos.users.insert({
      id: userId,
      organization_id: organizationId,
      user_name: opts.userName ?? 'Root user',
      user_email: null,
      user_phone_number: null,
      email_verified_at: null,
      phone_number_verified_at: null,
      email_vouched_at: null,
      phone_number_vouched_at: null,
      created_at: now,
      updated_at: now,
    });
    await repos.apiKeys.insert([
      {
        id: apiKeyId,
        organization_id: organizationId,
        user_id: userId,
        api_key_name: 'Root API key',
        public_key: Buffer.from(apiKey.publicKey).toString('hex'),
        curve_type: 'API_KEY_CURVE_P256',
        credential_type: 'CREDENTIAL_TYPE_API_KEY_P256',
        expiration_seconds: null,
        expires_at: null,
        created_at: now,
        updated_at: now,
        session_profile_id: null,
      },
    ]);
    await repos.organizations.setRootQuorum(organizationId, 1, [userId], now);
  });
  return {
    organizationId,
    userId,
    apiKeyId,
    apiPublicKey: Buffer.from(apiKey.publicKey).toString('hex'),
    apiPrivateKey: Buffer.from(apiKey.privateKey).toString('hex'),
    signerPublicKey: Buffer.from(signer.publicKeyUncompressed).toString('hex'),
  };
}

export interface LoadedDeployment {
  rootOrganizationId: string;
  barrier: Barrier;
  signer: P256Signer;
}

/** The deployment's seal as stored: which seal, and the data key it wraps. */
export async function readCustody(repos: Repositories): Promise<{ record: SealRecord; wrapped: string }> {
  const wrapped = await repos.meta.get(META.wrappedDataKey);
  if (!wrapped || !(await repos.meta.get(META.rootOrganizationId))) throw new Error('this deployment is not initialized: run "sigil init" first');
  return { record: parseSealRecord(await repos.meta.get(META.seal)), wrapped };
}

/** Unwraps the data key with `seal`, which must be the deployment's own; errors name the mismatch. */
export async function unwrapWith(repos: Repositories, seal: OpenSeal): Promise<Buffer> {
  const { record, wrapped } = await readCustody(repos);
  if (record.type !== seal.type) throw new SealError(`this deployment is sealed by the ${record.type} seal, but SIGIL_SEAL is ${seal.type}`);
  return seal.unwrap(wrapped);
}

/** Opens the barrier with `seal` (static or pkcs11) and loads the signer key; fails clearly when uninitialized. */
export async function loadDeployment(repos: Repositories, seal: OpenSeal): Promise<LoadedDeployment> {
  const dataKey = await unwrapWith(repos, seal);
  try {
    return await openDeployment(repos, dataKey);
  } finally {
    dataKey.fill(0);
  }
}

/** Opens the barrier over an unwrapped data key and loads the signer key. */
export async function openDeployment(repos: Repositories, dataKey: Buffer): Promise<LoadedDeployment> {
  const rootOrganizationId = await repos.meta.get(META.rootOrganizationId);
  const signerPub = await repos.meta.get(META.signerPublicKey);
  const signerSealed = await repos.meta.get(META.signerPrivateKey);
  if (!rootOrganizationId || !signerPub || !signerSealed) {
    throw new Error('this deployment is not initialized: run "sigil init" first');
  }
  const barrier = Barrier.fromDataKey(dataKey);
  const privateKey = barrier.open(signerSealed, SIGNER_LOCATION);
  const signer = new P256Signer(privateKey);
  privateKey.fill(0);
  if (signer.publicKeyUncompressedHex !== signerPub) throw new Error('the stored deployment signer key does not match its public key');
  return { rootOrganizationId, barrier, signer };
}
