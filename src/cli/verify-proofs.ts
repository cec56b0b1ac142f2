// `sigil verify-proofs`: checks an activity's app proofs offline, against a boot proof and the
// deployment signer key (issue "App proofs"): the boot statement must be signed by the signer key,
// every proof must come from the ephemeral key the boot statement names, and every proof's
// signature must hold. Prints one line per check and exits non-zero if any fails.
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
    check(verifyAppProof(proof), `proof ${i} signature holds (${JSON.parse(proof.proofPayload).type ?? 'unknown type'})`);
  }
  return { ok, lines };
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
