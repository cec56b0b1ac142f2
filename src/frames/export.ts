// The export frame (docs/embedded-wallets.md): @turnkey/iframe-stamper's INJECT_WALLET_EXPORT_BUNDLE
// and INJECT_KEY_EXPORT_BUNDLE. The bundle is checked against this deployment's signer key, opened
// with the frame's embedded key (which is then discarded: one key, one export), and the mnemonic or
// the key, in the KeyFormat asked for, is shown in this page only. The parent hears `true`, never the secret.
import {
  applySettingsHandler,
  embeddedKeyHandlers,
  ensureEmbeddedKey,
  getEmbeddedKey,
  openChannel,
  openExportBundle,
  publicKeyHex,
  readSettings,
  resetEmbeddedKey,
} from './common.js';
import { encodeKey, keyFormat } from './key-formats.js';

const settings = readSettings();
ensureEmbeddedKey();

function show(label: string, secret: string, passphrase?: string): void {
  document.getElementById('label')!.textContent = label;
  document.getElementById('secret')!.textContent = secret;
  const extra = document.getElementById('passphrase-row')!;
  extra.toggleAttribute('hidden', passphrase === undefined);
  document.getElementById('passphrase')!.textContent = passphrase ?? '';
  document.body.classList.add('revealed');
}

async function decrypt(message: { value?: unknown; organizationId?: unknown }): Promise<Uint8Array> {
  const key = getEmbeddedKey();
  if (!key) throw new Error('this frame has no embedded key: reload it and request a new export bundle');
  const plaintext = await openExportBundle(message.value, message.organizationId, settings, key);
  // The export is done with this key; the next export gets a fresh one.
  resetEmbeddedKey();
  return plaintext;
}

openChannel(settings, async (ttl) => publicKeyHex(ensureEmbeddedKey(ttl)), {
  ...embeddedKeyHandlers,
  INJECT_WALLET_EXPORT_BUNDLE: async (message) => {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(await decrypt(message));
    const [mnemonic, passphrase] = text.split('\n--PASS--\n');
    show('Secret recovery phrase', mnemonic, passphrase);
    return { type: 'BUNDLE_INJECTED', value: true };
  },
  INJECT_KEY_EXPORT_BUNDLE: async (message) => {
    const format = keyFormat(message.keyFormat);
    const key = await decrypt(message);
    try {
      show(`Private key (${format.toLowerCase().replace(/_/g, ' ')})`, encodeKey(key, format));
    } finally {
      key.fill(0);
    }
    return { type: 'BUNDLE_INJECTED', value: true };
  },
  APPLY_SETTINGS: applySettingsHandler('secret'),
});
