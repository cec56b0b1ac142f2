// App proofs (docs/reference/api.md "Activities" `generateAppProofs`; docs/reference/activities.md "App proofs and events"): signed
// statements of what the service did. A process holds an ephemeral app-proof key pair that is
// never stored; its 130-byte public key is the 65-byte uncompressed encryption key followed by the
// 65-byte uncompressed signing key, as @turnkey/crypto's verifyAppProofSignature expects. A proof's
// signature is the raw r‖s hex of ECDSA-P256 over sha256(UTF-8 proofPayload). The boot statement
// binds that key to the deployment signer key, standing in for the enclave attestation a hosted
// service would show.
import { generateP256KeyPair, P256Signer, bytesToHex, verifyP256Der, verifyP256Raw } from './p256.js';

export const APP_PROOF_SCHEME = 'SIGNATURE_SCHEME_EPHEMERAL_KEY_P256';

export interface AppProof {
  scheme: typeof APP_PROOF_SCHEME;
  publicKey: string;
  proofPayload: string;
  signature: string;
}

export class AppProofKey {
  /** 130 bytes hex: encryption key ‖ signing key, both uncompressed. */
  readonly publicKey: string;
  readonly #signer: P256Signer;

  constructor() {
    const encryption = generateP256KeyPair();
    const signing = generateP256KeyPair();
    this.#signer = new P256Signer(signing.privateKey);
    signing.privateKey.fill(0);
    // The encryption half is part of the published key; nothing is encrypted to it here.
    encryption.privateKey.fill(0);
    this.publicKey = bytesToHex(encryption.publicKeyUncompressed) + this.#signer.publicKeyUncompressedHex;
  }

  prove(payload: Record<string, unknown>): AppProof {
    const proofPayload = JSON.stringify(payload);
    const signature = bytesToHex(this.#signer.signRaw(new Uint8Array(Buffer.from(proofPayload, 'utf8'))));
    return { scheme: APP_PROOF_SCHEME, publicKey: this.publicKey, proofPayload, signature };
  }
}

/** Checks one proof's signature against the signing half of its own public key. */
export function verifyAppProof(proof: AppProof): boolean {
  if (proof.scheme !== APP_PROOF_SCHEME || !/^[0-9a-f]{260}$/i.test(proof.publicKey)) return false;
  try {
    return verifyP256Raw(proof.publicKey.slice(130), new Uint8Array(Buffer.from(proof.proofPayload, 'utf8')), proof.signature);
  } catch {
    return false;
  }
}

/** What the deployment signer attests at a process's start. */
export interface BootStatement {
  ephemeralPublicKeyHex: string;
  app: 'sigil';
  version: string;
  startedAtMs: string;
}

export function signBootStatement(statement: BootStatement, deploymentSigner: P256Signer): { statement: string; signature: string } {
  const text = JSON.stringify(statement);
  return { statement: text, signature: deploymentSigner.signDer(new Uint8Array(Buffer.from(text, 'utf8'))) };
}

export function verifyBootStatement(statement: string, signatureDerHex: string, signerPublicKey: string): BootStatement | undefined {
  try {
    if (!verifyP256Der(signerPublicKey, new Uint8Array(Buffer.from(statement, 'utf8')), signatureDerHex)) return undefined;
    return JSON.parse(statement) as BootStatement;
  } catch {
    return undefined;
  }
}
