// The deployment: what `sigil init` creates once (barrier data key, the deployment signer key, the
// root organization with its root user and API key, the root quorum) and what `sigil serve` loads.
// All of init's writes happen in one transaction, so a failed init leaves nothing behind, and the
// `root_organization_id` fact makes a second init refuse without changing anything.
import { createPrivateKey, generateKeyPairSync, randomUUID, sign as nodeSign, type KeyObject } from 'node:crypto';
import { Barrier } from '../barrier/barrier.js';
import type { Repositories, Store } from '../store/index.js';
import type { DeploymentSigner } from './context.js';

const META = {
  rootOrganizationId: 'root_organization_id',
  wrappedDataKey: 'barrier.wrapped_data_key',
  signerPublicKey: 'deployment_signer.public_key',
  signerPrivateKey: 'deployment_signer.private_key',
} as const;

const SIGNER_LOCATION = { table: 'meta', rowId: META.signerPrivateKey, column: 'value' };

export interface P256KeyPair {
  /** 32-byte private scalar. */
  privateKey: Buffer;
  /** 65-byte uncompressed SEC1 point. */
  publicKeyUncompressed: Buffer;
  /** 33-byte compressed SEC1 point. */
  publicKeyCompressed: Buffer;
}

export function generateP256(): P256KeyPair {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  const x = Buffer.from(jwk.x!, 'base64url');
  const y = Buffer.from(jwk.y!, 'base64url');
  return {
    privateKey: Buffer.from(jwk.d!, 'base64url'),
    publicKeyUncompressed: Buffer.concat([Buffer.from([4]), x, y]),
    publicKeyCompressed: Buffer.concat([Buffer.from([y[31] & 1 ? 3 : 2]), x]),
  };
}

function signerFrom(privateKey: Buffer, publicKeyUncompressed: Buffer): DeploymentSigner {
  const key: KeyObject = createPrivateKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      d: privateKey.toString('base64url'),
      x: publicKeyUncompressed.subarray(1, 33).toString('base64url'),
      y: publicKeyUncompressed.subarray(33, 65).toString('base64url'),
    },
    format: 'jwk',
  });
  return {
    publicKey: publicKeyUncompressed.toString('hex'),
    sign: (message) => nodeSign('sha256', message, key),
  };
}

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
  masterKey: Buffer,
  opts: { organizationName?: string; userName?: string; now?: number } = {},
): Promise<InitResult> {
  const now = opts.now ?? Date.now();
  const { barrier, wrappedDataKey } = Barrier.create(masterKey);
  const signer = generateP256();
  const apiKey = generateP256();
  const organizationId = randomUUID();
  const userId = randomUUID();
  const apiKeyId = randomUUID();
  await store.transaction(async (repos) => {
    // Inserting the root-organization fact first makes a concurrent second init fail on the key.
    await repos.meta.insert(META.rootOrganizationId, organizationId);
    await repos.meta.insert(META.wrappedDataKey, wrappedDataKey);
    await repos.meta.insert(META.signerPublicKey, signer.publicKeyUncompressed.toString('hex'));
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
      created_at: now,
      updated_at: now,
    });
    await repos.apiKeys.insert([
      {
        id: apiKeyId,
        organization_id: organizationId,
        user_id: userId,
        api_key_name: 'Root API key',
        public_key: apiKey.publicKeyCompressed.toString('hex'),
        curve_type: 'API_KEY_CURVE_P256',
        credential_type: 'CREDENTIAL_TYPE_API_KEY_P256',
        expiration_seconds: null,
        expires_at: null,
        created_at: now,
        updated_at: now,
      },
    ]);
    await repos.organizations.setRootQuorum(organizationId, 1, [userId], now);
  });
  return {
    organizationId,
    userId,
    apiKeyId,
    apiPublicKey: apiKey.publicKeyCompressed.toString('hex'),
    apiPrivateKey: apiKey.privateKey.toString('hex'),
    signerPublicKey: signer.publicKeyUncompressed.toString('hex'),
  };
}

export interface LoadedDeployment {
  rootOrganizationId: string;
  barrier: Barrier;
  signer: DeploymentSigner;
}

/** Opens the barrier with the master key and loads the signer key; fails clearly when uninitialized. */
export async function loadDeployment(repos: Repositories, masterKey: Buffer): Promise<LoadedDeployment> {
  const rootOrganizationId = await repos.meta.get(META.rootOrganizationId);
  const wrapped = await repos.meta.get(META.wrappedDataKey);
  const signerPub = await repos.meta.get(META.signerPublicKey);
  const signerSealed = await repos.meta.get(META.signerPrivateKey);
  if (!rootOrganizationId || !wrapped || !signerPub || !signerSealed) {
    throw new Error('this deployment is not initialized: run "sigil init" first');
  }
  const barrier = Barrier.unseal(masterKey, wrapped);
  const signer = signerFrom(barrier.open(signerSealed, SIGNER_LOCATION), Buffer.from(signerPub, 'hex'));
  return { rootOrganizationId, barrier, signer };
}
