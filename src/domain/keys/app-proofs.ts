// App proofs of activities and boot proofs of processes (docs/reference/api.md "Activities"; docs/reference/policies.md
// docs/reference/api.md "Activities"). A proof's payload has the documented envelope `{type, timestampMs, <member>}` (the
// shapes of tkhq/sdk packages/crypto's proof tests and Turnkey's AppProofPayload):
//  - APP_PROOF_TYPE_ADDRESS_DERIVATION, `addressDerivationProof {organizationId, walletId?,
//    derivationPath?, address}`: one per address a wallet, account, private key or sub-organization
//    wallet creation derives (a private key's address has no wallet or path);
//  - APP_PROOF_TYPE_POLICY_OUTCOME, `policyOutcomeProof {organizationId, outcome, decisionContextDigest,
//    organizationDataDigest, parentOrganizationDataDigest, userRequestApprovals}`: one per activity,
//    the decision that let it run. decisionContextDigest is the hex SHA-256 of the request body (the
//    activity's fingerprint, which a client computes with computeActivityFingerprint); an organization
//    data digest is the hex SHA-256 of the canonical JSON of what decides there: the root quorum and
//    every policy (parentOrganizationDataDigest is '' for a top-level organization); the approvals are
//    the votes' signed requests {scheme, publicKey, message, signature}.
// Facts come from each operation's declaration (derivations) and from the decision (outcome); this
// module stamps them with the type and time and signs them with the process's ephemeral key. Boot
// proofs carry Sigil's boot statement in the v1BootProof record: `qosManifestB64` holds the statement
// JSON and `qosManifestEnvelopeB64` the deployment signer's signature over it; `awsAttestationDocB64`
// and `owner` stay empty, because only an attested enclave could fill them.
import { createHash } from 'node:crypto';
import { AppProofKey, signBootStatement, type AppProof } from '../../crypto/app-proofs.js';
import { canonicalJson } from '../../crypto/canonical-json.js';
import type { P256Signer } from '../../crypto/p256.js';
import type { OrganizationRow, Repositories, VoteRow } from '../../store/index.js';
import { timestamp } from '../records.js';

export const ADDRESS_DERIVATION = 'APP_PROOF_TYPE_ADDRESS_DERIVATION';
export const POLICY_OUTCOME = 'APP_PROOF_TYPE_POLICY_OUTCOME';

/** What one proof states, without its time: the type and the member that type names. */
export type AppProofFact =
  | {
      type: typeof ADDRESS_DERIVATION;
      addressDerivationProof: { organizationId: string; walletId?: string; derivationPath?: string; address: string };
    }
  | {
      type: typeof POLICY_OUTCOME;
      policyOutcomeProof: {
        organizationId: string;
        outcome: string;
        decisionContextDigest: string;
        organizationDataDigest: string;
        parentOrganizationDataDigest: string;
        userRequestApprovals: { scheme: string; publicKey: string; message: string; signature: string }[];
      };
    };

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** One address-derivation fact per derived wallet account, in request order (the order of `addresses`). */
export function walletDerivationFacts(organizationId: string, walletId: string, accounts: { path: string }[], addresses: string[]): AppProofFact[] {
  return addresses.map((address, i) => ({ type: ADDRESS_DERIVATION, addressDerivationProof: { organizationId, walletId, derivationPath: accounts[i].path, address } }));
}

/** One address-derivation fact per address of a private key (no wallet, no path). */
export function keyDerivationFacts(organizationId: string, addresses: string[]): AppProofFact[] {
  return addresses.map((address) => ({ type: ADDRESS_DERIVATION, addressDerivationProof: { organizationId, address } }));
}

/** The digest of what decides in an organization: its root quorum and its policies. */
async function organizationDataDigest(repos: Repositories, org: OrganizationRow): Promise<string> {
  const [userIds, policies] = await Promise.all([repos.organizations.rootQuorumUserIds(org.id), repos.policies.list(org.id)]);
  return sha256Hex(
    canonicalJson({
      organizationId: org.id,
      rootQuorum: { threshold: org.root_quorum_threshold, userIds: [...userIds].sort() },
      policies: policies
        .map((p) => ({ policyId: p.id, policyName: p.name, effect: p.effect, condition: p.condition ?? '', consensus: p.consensus ?? '', time: p.time ?? '' }))
        .sort((a, b) => (a.policyId < b.policyId ? -1 : 1)),
    }),
  );
}

/**
 * The policy-outcome fact of an activity allowed to run in `organization`: its request (by
 * fingerprint), the data of the organization and of its parent that decided, and the approvals.
 */
export async function policyOutcomeFact(repos: Repositories, organization: OrganizationRow, fingerprint: string, votes: VoteRow[]): Promise<AppProofFact> {
  const parent = organization.parent_organization_id ? await repos.organizations.get(organization.parent_organization_id) : undefined;
  return {
    type: POLICY_OUTCOME,
    policyOutcomeProof: {
      organizationId: organization.id,
      outcome: 'OUTCOME_ALLOW',
      decisionContextDigest: fingerprint.replace(/^sha256:/, ''),
      organizationDataDigest: await organizationDataDigest(repos, organization),
      parentOrganizationDataDigest: parent ? await organizationDataDigest(repos, parent) : '',
      userRequestApprovals: votes
        .filter((v) => v.selection === 'VOTE_SELECTION_APPROVED')
        .map((v) => ({ scheme: v.scheme, publicKey: v.public_key, message: v.message, signature: v.signature })),
    },
  };
}

export function proveFacts(key: AppProofKey, facts: AppProofFact[], now: number): AppProof[] {
  return facts.map(({ type, ...member }) => key.prove({ type, timestampMs: String(now), ...member }));
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
