// `sigil verify-proofs`: checks an activity's app proofs offline, against a boot proof and the
// deployment signer key (issue "App proofs"; docs/reference/activities.md "App proofs and events"): the boot statement must be
// signed by the signer key, every proof must come from the ephemeral key the boot statement names,
// every proof's signature must hold, and every payload must have the documented shape and state
// what the activity shows: an address-derivation proof an address of its result, the policy-outcome
// proof its organization, its request (fingerprint) and its votes. Payloads in the flat shape of
// earlier Sigil versions are reported as such and checked for their signature only. Prints one line
// per check and exits non-zero if any fails.
import { readFileSync } from 'node:fs';
import { verifyAppProof, verifyBootStatement, type AppProof } from '../crypto/app-proofs.js';

interface Inputs {
  activityFile: string;
  bootProofFile: string;
  signerPublicKey: string;
}

function readJson(path: string): any {
  return JSON.parse(readFileSync(path, 'utf8'));
}

export function verifyProofs(inputs: Inputs): { ok: boolean; lines: string[] } {
  const lines: string[] = [];
  let ok = true;
  const check = (passed: boolean, what: string) => {
    lines.push(`${passed ? 'ok  ' : 'FAIL'} ${what}`);
    ok &&= passed;
  };
  const activityDoc = readJson(inputs.activityFile);
  const activity = activityDoc.activity ?? activityDoc;
  const bootDoc = readJson(inputs.bootProofFile);
  const boot = bootDoc.bootProof ?? bootDoc;
  const statement = Buffer.from(String(boot.qosManifestB64 ?? ''), 'base64').toString('utf8');
  let envelope: { signature?: string } = {};
  try {
    envelope = JSON.parse(Buffer.from(String(boot.qosManifestEnvelopeB64 ?? ''), 'base64').toString('utf8'));
  } catch {
    /* reported below */
  }
  const bootStatement = verifyBootStatement(statement, String(envelope.signature ?? ''), inputs.signerPublicKey.replace(/^0x/, ''));
  check(bootStatement !== undefined, 'boot statement is signed by the deployment signer key');
  check(bootStatement?.ephemeralPublicKeyHex === boot.ephemeralPublicKeyHex, 'boot statement names the boot proof ephemeral key');
  const proofs: AppProof[] = activity.appProofs ?? [];
  check(proofs.length > 0, `activity ${activity.id ?? '?'} carries app proofs (${proofs.length})`);
  for (const [i, proof] of proofs.entries()) {
    check(proof.publicKey === bootStatement?.ephemeralPublicKeyHex, `proof ${i} comes from the booted ephemeral key`);
    let payload: Record<string, any> = {};
    try {
      payload = JSON.parse(proof.proofPayload);
    } catch {
      /* reported by the shape check */
    }
    check(verifyAppProof(proof), `proof ${i} signature holds (${payload.type ?? 'unknown type'})`);
    for (const [passed, what] of statementChecks(payload, activity)) check(passed, `proof ${i} ${what}`);
  }
  return { ok, lines };
}

/** What one proof's payload states, checked against the activity it came with. */
function statementChecks(payload: Record<string, any>, activity: Record<string, any>): [boolean, string][] {
  const timed = typeof payload.timestampMs === 'string' && /^\d+$/.test(payload.timestampMs);
  if (payload.type === 'APP_PROOF_TYPE_ADDRESS_DERIVATION' && payload.addressDerivationProof) {
    const { organizationId, address } = payload.addressDerivationProof;
    return [
      [timed && typeof organizationId === 'string' && typeof address === 'string', 'has the documented addressDerivationProof shape'],
      // The result names every derived address (a sub-organization's wallet is in its result too).
      [typeof address === 'string' && JSON.stringify(activity.result ?? {}).includes(JSON.stringify(address)), `derives an address of the activity's result (${address})`],
    ];
  }
  if (payload.type === 'APP_PROOF_TYPE_POLICY_OUTCOME' && payload.policyOutcomeProof) {
    const p = payload.policyOutcomeProof;
    const votes: Record<string, any>[] = activity.votes ?? [];
    const approvals: Record<string, any>[] = Array.isArray(p.userRequestApprovals) ? p.userRequestApprovals : [];
    return [
      [timed && typeof p.outcome === 'string' && typeof p.organizationDataDigest === 'string' && typeof p.parentOrganizationDataDigest === 'string', 'has the documented policyOutcomeProof shape'],
      [p.organizationId === activity.organizationId, `is about the activity's organization (${p.organizationId})`],
      [`sha256:${p.decisionContextDigest}` === activity.fingerprint, "decided the activity's request (its fingerprint)"],
      [
        approvals.length > 0 && approvals.every((a) => votes.some((v) => v.publicKey === a.publicKey && v.signature === a.signature && v.message === a.message)),
        `approvals are votes of the activity (${approvals.length})`,
      ],
    ];
  }
  if (typeof payload.type === 'string' && 'organizationId' in payload) return [[true, `has the flat shape of an earlier Sigil version (${payload.type})`]];
  return [[false, `has a documented type and shape (${String(payload.type)})`]];
}

export function verifyProofsCommand(flags: Record<string, string | boolean | undefined>): number {
  const activityFile = flags.activity;
  const bootProofFile = flags['boot-proof'];
  const signerPublicKey = flags.signer;
  if (typeof activityFile !== 'string' || typeof bootProofFile !== 'string' || typeof signerPublicKey !== 'string') {
    throw new Error('usage: sigil verify-proofs --activity FILE --boot-proof FILE --signer SIGNER_PUBLIC_KEY_HEX');
  }
  const { ok, lines } = verifyProofs({ activityFile, bootProofFile, signerPublicKey });
  process.stdout.write(lines.join('\n') + '\n');
  return ok ? 0 : 1;
}
