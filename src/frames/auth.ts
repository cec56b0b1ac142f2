// The auth frame (docs/embedded-wallets.md): INJECT_CREDENTIAL_BUNDLE then STAMP_REQUEST, as
// @turnkey/iframe-stamper and @turnkey/sdk-browser's iframe client drive them for email auth,
// recovery and OTP or OAuth sessions. The credential bundle (bs58check of the compressed encapsulated
// key ‖ ciphertext) is opened with the embedded key; the API private key it holds stays in this
// page's memory only and signs the X-Stamp of each payload the parent hands in.
import { base58check, embeddedKeyHandlers, ensureEmbeddedKey, getEmbeddedKey, hpkeOpen, openChannel, publicKeyHex, readSettings, stampWith } from './common.js';

const settings = readSettings();
ensureEmbeddedKey();
let credential: Uint8Array | null = null;

openChannel(settings, async (ttl) => publicKeyHex(ensureEmbeddedKey(ttl)), {
  ...embeddedKeyHandlers,
  INJECT_CREDENTIAL_BUNDLE: async (message) => {
    if (typeof message.value !== 'string') throw new Error('the credential bundle must be a string');
    let raw: Uint8Array;
    try {
      raw = base58check.decode(message.value.trim());
    } catch {
      throw new Error('the credential bundle is not valid base58check');
    }
    if (raw.length <= 33) throw new Error('the credential bundle is too short');
    const key = getEmbeddedKey();
    if (!key) throw new Error('this frame has no embedded key: reload it and start the login again');
    const opened = await hpkeOpen(key, raw.subarray(0, 33), raw.subarray(33));
    if (opened.length !== 32) throw new Error('the credential bundle does not hold a P-256 private key');
    credential?.fill(0);
    credential = opened;
    document.body.classList.add('revealed');
    return { type: 'BUNDLE_INJECTED', value: true };
  },
  STAMP_REQUEST: async (message) => {
    if (!credential) throw new Error('no credential: inject a credential bundle before stamping');
    if (typeof message.value !== 'string') throw new Error('the payload to stamp must be a string');
    return { type: 'STAMP', value: stampWith(credential, message.value) };
  },
});
