// The import frame (docs/embedded-wallets.md): INJECT_IMPORT_BUNDLE, then EXTRACT_WALLET_ENCRYPTED_BUNDLE
// or EXTRACT_KEY_ENCRYPTED_BUNDLE, as @turnkey/iframe-stamper drives them. The import bundle's
// target key is accepted only with this deployment's signature and for the organization and user
// the parent names; what the user types here is sealed to that key and only the sealed bundle
// (formatHpkeBuf JSON) goes to the parent. The text field is emptied once sealed.
import { applySettingsHandler, fromHex, hpkeSeal, openChannel, readSettings, utf8, verifySignedBundle } from './common.js';
import { decodeKey, keyFormat } from './key-formats.js';

const settings = readSettings();
let target: Uint8Array | null = null;

const plaintextField = () => document.getElementById('plaintext') as HTMLTextAreaElement;
const passphraseField = () => document.getElementById('passphrase') as HTMLInputElement;

function takeTarget(): Uint8Array {
  if (!target) throw new Error('no import bundle: inject one before extracting');
  const t = target;
  target = null; // one import bundle, one encrypted bundle
  return t;
}

openChannel(settings, async () => '', {
  INJECT_IMPORT_BUNDLE: async (message) => {
    const signed = verifySignedBundle(message.value, settings, { organizationId: message.organizationId, userId: message.userId });
    if (typeof signed.targetPublic !== 'string') throw new Error('the import bundle lacks "targetPublic"');
    target = fromHex(signed.targetPublic, 'targetPublic');
    document.body.classList.add('ready');
    return { type: 'BUNDLE_INJECTED', value: true };
  },
  EXTRACT_WALLET_ENCRYPTED_BUNDLE: async () => {
    const mnemonic = plaintextField().value.trim().split(/\s+/).join(' ');
    if (!mnemonic) throw new Error('no mnemonic entered');
    const passphrase = passphraseField().value;
    const text = passphrase === '' ? mnemonic : `${mnemonic}\n--PASS--\n${passphrase}`;
    const bundle = await hpkeSeal(takeTarget(), utf8.encode(text));
    plaintextField().value = '';
    passphraseField().value = '';
    return { type: 'ENCRYPTED_BUNDLE_EXTRACTED', value: bundle };
  },
  EXTRACT_KEY_ENCRYPTED_BUNDLE: async (message) => {
    const text = plaintextField().value.trim();
    if (!text) throw new Error('no private key entered');
    const key = decodeKey(text, keyFormat(message.keyFormat));
    const bundle = await hpkeSeal(takeTarget(), key);
    key.fill(0);
    plaintextField().value = '';
    return { type: 'ENCRYPTED_BUNDLE_EXTRACTED', value: bundle };
  },
  APPLY_SETTINGS: applySettingsHandler('plaintext', 'passphrase'),
});

// Pasting a secret should not leave it on the clipboard (the stamper grants clipboard-write).
plaintextField().addEventListener('paste', () => {
  void navigator.clipboard?.writeText('').catch(() => undefined);
});
