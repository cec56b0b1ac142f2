// App proofs of activities and boot proofs of processes (interface-spec.md §4.1; issue "App
// proofs"). Facts come from each operation's declaration; this module stamps them with a type and
// time and signs them with the process's ephemeral key. Boot proofs carry Sigil's boot statement in
// the v1BootProof record: `qosManifestB64` holds the statement JSON and `qosManifestEnvelopeB64` the
// deployment signer's signature over it; `awsAttestationDocB64` and `owner` stay empty, because only
// an attested enclave could fill them.
import { createHash } from 'node:crypto';
import { AppProofKey, signBootStatement, type AppProof } from '../crypto/app-proofs.js';
import type { P256Signer } from '../crypto/p256.js';
import type { Repositories } from '../store/index.js';
import { timestamp } from './records.js';

export const ADDRESS_DERIVATION = 'APP_PROOF_TYPE_ADDRESS_DERIVATION';
export const SIGNATURE = 'APP_PROOF_TYPE_SIGNATURE';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function proveFacts(key: AppProofKey, facts: Record<string, unknown>[], now: number): AppProof[] {
  return facts.map((fact) => {
    const { type, ...rest } = fact;
    return key.prove({ type, timestampMs: String(now), ...rest });
  });
}

export interface BootProofRecord {
  ephemeralPublicKeyHex: string;
  awsAttestationDocB64: string;
  qosManifestB64: string;
  qosManifestEnvelopeB64: string;
  deploymentLabel: string;
  enclaveApp: string;
  owner: string;
  createdAt: { seconds: string; nanos: string };
  qosManifestVersion: string;
}

/** Signs this process's boot statement and records it, so any process can serve it. */
export async function recordBootProof(
  repos: Repositories,
  key: AppProofKey,
  signer: P256Signer,
  version: string,
  now: number,
): Promise<BootProofRecord> {
  const { statement, signature } = signBootStatement(
    { ephemeralPublicKeyHex: key.publicKey, app: 'sigil', version, startedAtMs: String(now) },
    signer,
  );
  const record: BootProofRecord = {
    ephemeralPublicKeyHex: key.publicKey,
    awsAttestationDocB64: '',
    qosManifestB64: Buffer.from(statement, 'utf8').toString('base64'),
    qosManifestEnvelopeB64: Buffer.from(JSON.stringify({ signature, signerPublicKey: signer.publicKeyUncompressedHex }), 'utf8').toString('base64'),
    deploymentLabel: 'sigil',
    enclaveApp: 'sigil',
    owner: '',
    createdAt: timestamp(now),
    qosManifestVersion: 'sigil-boot-statement-v1',
  };
  await repos.bootProofs.insert({ ephemeral_public_key: key.publicKey, boot_proof: JSON.stringify(record), created_at: now });
  return record;
}
