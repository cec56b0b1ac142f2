// The pkcs11 seal (docs/operator-guide.md "Custody"): the data key is wrapped by AES-256-GCM inside an HSM, with a
// key created on the token as sensitive and non-extractable, so the key that opens the deployment
// never exists outside the HSM. Any PKCS#11 v2.40 module serves (SoftHSM2 in tests; YubiHSM,
// CloudHSM, Luna through theirs). Each wrap or unwrap opens a session, logs in and closes again:
// it happens at start, at an unseal or a migration only, never on the request path.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pkcs11js from 'pkcs11js';
import { SealError, type OpenSeal } from './seals.js';

export interface Pkcs11Settings {
  /** Path of the PKCS#11 module (SIGIL_PKCS11_MODULE). */
  module: string;
  /** The token, by label (SIGIL_PKCS11_TOKEN_LABEL) or by slot id (SIGIL_PKCS11_SLOT). */
  tokenLabel?: string;
  slot?: string;
  /** The user PIN (SIGIL_PKCS11_PIN) or a file holding it (SIGIL_PKCS11_PIN_FILE). */
  pin?: string;
  pinFile?: string;
  /** Label of the AES key on the token (SIGIL_PKCS11_KEY_LABEL). */
  keyLabel: string;
}

const FORMAT = 'pkcs11:v1:';
// Binds a wrapped key to its purpose inside the HSM's GCM as the static seal's AAD does outside.
const AAD = Buffer.from('sigil:barrier:data-key:pkcs11:v1');

function pinOf(s: Pkcs11Settings): string {
  if (s.pin) return s.pin;
  if (s.pinFile) {
    try {
      return readFileSync(s.pinFile, 'utf8').trim();
    } catch (err) {
      throw new SealError(`cannot read the HSM PIN file ${s.pinFile}: ${(err as Error).message}`);
    }
  }
  throw new SealError('the pkcs11 seal needs the token PIN: set SIGIL_PKCS11_PIN or SIGIL_PKCS11_PIN_FILE');
}

function codeOf(err: unknown): string {
  return err instanceof Error ? err.message.split(/[\s:]/)[0] : String(err);
}

interface Session {
  p: pkcs11js.PKCS11;
  session: Buffer;
}

/** Loads the module, finds the token, logs in; `use` runs with the session, which is always closed after. */
function withSession<T>(s: Pkcs11Settings, use: (x: Session) => T): T {
  const pin = pinOf(s);
  const p = new pkcs11js.PKCS11();
  try {
    p.load(s.module);
  } catch (err) {
    throw new SealError(`cannot load the PKCS#11 module ${s.module} (SIGIL_PKCS11_MODULE): ${(err as Error).message}`);
  }
  let initialized = false;
  try {
    p.C_Initialize();
    initialized = true;
    const slots = p.C_GetSlotList(true);
    const slot = slots.find((id) =>
      s.slot !== undefined ? BigInt(`0x${Buffer.from(id).reverse().toString('hex')}`).toString() === s.slot : p.C_GetTokenInfo(id).label.trim() === s.tokenLabel,
    );
    if (!slot) {
      throw new SealError(s.slot !== undefined ? `no token in PKCS#11 slot ${s.slot}` : `no PKCS#11 token labelled "${s.tokenLabel}" (SIGIL_PKCS11_TOKEN_LABEL)`);
    }
    const session = p.C_OpenSession(slot, pkcs11js.CKF_RW_SESSION | pkcs11js.CKF_SERIAL_SESSION);
    try {
      try {
        p.C_Login(session, pkcs11js.CKU_USER, pin);
      } catch (err) {
        const code = codeOf(err);
        throw new SealError(code === 'CKR_PIN_INCORRECT' ? 'the HSM refused the PIN (CKR_PIN_INCORRECT)' : `the HSM refused the login (${code})`);
      }
      return use({ p, session });
    } finally {
      p.C_CloseSession(session);
    }
  } catch (err) {
    if (err instanceof SealError) throw err;
    throw new SealError(`the HSM failed: ${codeOf(err)}`);
  } finally {
    if (initialized) p.C_Finalize();
    p.close();
  }
}

function findKey({ p, session }: Session, label: string): Buffer | undefined {
  p.C_FindObjectsInit(session, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
    { type: pkcs11js.CKA_LABEL, value: label },
  ]);
  try {
    const found = p.C_FindObjects(session, 2);
    if (found.length > 1) throw new SealError(`more than one key on the token is labelled "${label}"; give the seal's key a label of its own`);
    return found[0];
  } finally {
    p.C_FindObjectsFinal(session);
  }
}

function gcm(iv: Buffer) {
  return { mechanism: pkcs11js.CKM_AES_GCM, parameter: { type: pkcs11js.CK_PARAMS_AES_GCM, iv, aad: AAD, ivBits: 96, tagBits: 128 } };
}

/**
 * Creates the seal's key on the token unless one with its label exists (`sigil init`, a migration to
 * pkcs11): AES-256, sensitive and not extractable, usable only to encrypt and decrypt.
 */
export function ensurePkcs11Key(s: Pkcs11Settings): { created: boolean } {
  return withSession(s, (x) => {
    if (findKey(x, s.keyLabel)) return { created: false };
    x.p.C_GenerateKey(x.session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
      { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
      { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
      { type: pkcs11js.CKA_LABEL, value: s.keyLabel },
      { type: pkcs11js.CKA_TOKEN, value: true },
      { type: pkcs11js.CKA_PRIVATE, value: true },
      { type: pkcs11js.CKA_SENSITIVE, value: true },
      { type: pkcs11js.CKA_EXTRACTABLE, value: false },
      { type: pkcs11js.CKA_ENCRYPT, value: true },
      { type: pkcs11js.CKA_DECRYPT, value: true },
      { type: pkcs11js.CKA_WRAP, value: false },
      { type: pkcs11js.CKA_UNWRAP, value: false },
    ]);
    return { created: true };
  });
}

function keyOrFail(x: Session, label: string): Buffer {
  const key = findKey(x, label);
  if (!key) throw new SealError(`no key labelled "${label}" on the HSM token (SIGIL_PKCS11_KEY_LABEL)`);
  return key;
}

/** The pkcs11 seal; nothing is held between operations but the settings. */
export function pkcs11Seal(s: Pkcs11Settings): OpenSeal {
  return {
    type: 'pkcs11',
    wrap(dataKey) {
      return withSession(s, (x) => {
        const iv = randomBytes(12);
        x.p.C_EncryptInit(x.session, gcm(iv), keyOrFail(x, s.keyLabel));
        const ct = x.p.C_Encrypt(x.session, dataKey, Buffer.alloc(dataKey.length + 16));
        return `${FORMAT}${Buffer.concat([iv, ct]).toString('base64')}`;
      });
    },
    unwrap(wrapped) {
      if (!wrapped.startsWith(FORMAT)) throw new SealError('the stored data key is not wrapped by a pkcs11 seal');
      const raw = Buffer.from(wrapped.slice(FORMAT.length), 'base64');
      if (raw.length !== 12 + 32 + 16) throw new SealError('the stored wrapped data key is damaged');
      return withSession(s, (x) => {
        x.p.C_DecryptInit(x.session, gcm(raw.subarray(0, 12)), keyOrFail(x, s.keyLabel));
        try {
          return Buffer.from(x.p.C_Decrypt(x.session, raw.subarray(12), Buffer.alloc(64)));
        } catch {
          // GCM's tag check failed inside the HSM: another key, or the stored key was altered.
          throw new SealError(`the HSM key "${s.keyLabel}" does not open this deployment's data key (another key, or the wrapped key was altered)`);
        }
      });
    },
    close() {},
  };
}
