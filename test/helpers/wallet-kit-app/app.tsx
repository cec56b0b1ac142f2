// The embedded-wallet app of the browser test (test/e2e/wallet-kit.test.ts; docs/embedded-wallets.md
// "Embedded wallets: the browser kits"): the published @turnkey/react-wallet-kit as an app would use it,
// its TurnkeyProvider pointed at Sigil with nothing but the settings docs/embedded-wallets.md names
// (apiBaseUrl, authProxyUrl, authProxyConfigId, organizationId, the frame URLs). The page that serves it
// (test/helpers/ wallet-kit.ts) sets `window.SIGIL_KIT`; the test drives the kit's own hook methods
// through `window.kit` and reads the state the provider manages from `#state`, as an app's UI would
// render it. The kit has no export-and-sign method, so the page also hands the test the published
// @turnkey/iframe-stamper the kit itself uses, for the app's own export-and-sign frame.
import { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { TurnkeyProvider, useTurnkey, type TurnkeyProviderConfig } from '@turnkey/react-wallet-kit';
import { IframeStamper } from '@turnkey/iframe-stamper';

declare global {
  interface Window {
    SIGIL_KIT: {
      apiBaseUrl: string;
      authProxyUrl: string;
      authProxyConfigId: string;
      organizationId: string;
      exportIframeUrl?: string;
      importIframeUrl?: string;
      /** Not a kit setting: the app embeds this frame itself (the kit has no export-and-sign). */
      exportAndSignIframeUrl?: string;
    };
    kit: ReturnType<typeof useTurnkey>;
    IframeStamper: typeof IframeStamper;
    kitEvents: { kind: string; detail: unknown }[];
  }
}

window.kitEvents = [];
window.IframeStamper = IframeStamper;
const record = (kind: string, detail: unknown) => window.kitEvents.push({ kind, detail });

function State() {
  const kit = useTurnkey();
  // The latest hook value: its methods close over the provider's current state.
  window.kit = kit;
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 250);
    return () => clearInterval(t);
  }, []);
  const state = {
    clientState: kit.clientState,
    authState: kit.authState,
    organizationId: kit.session?.organizationId,
    sessionExpiry: kit.session?.expiry,
    userId: kit.user?.userId,
    userName: kit.user?.userName,
    wallets: kit.wallets.map((w) => ({
      walletId: w.walletId,
      walletName: w.walletName,
      accounts: w.accounts.map((a) => ({ address: a.address, addressFormat: a.addressFormat, path: a.path })),
    })),
  };
  return (
    <main>
      <h1>Sigil wallet kit app</h1>
      <pre id="state">{JSON.stringify(state, null, 2)}</pre>
    </main>
  );
}

const { apiBaseUrl, authProxyUrl, authProxyConfigId, organizationId, exportIframeUrl, importIframeUrl } = window.SIGIL_KIT;
const config: TurnkeyProviderConfig = {
  apiBaseUrl,
  authProxyUrl,
  authProxyConfigId,
  organizationId,
  ...(exportIframeUrl ? { exportIframeUrl } : {}),
  ...(importIframeUrl ? { importIframeUrl } : {}),
};

createRoot(document.getElementById('root')!).render(
  <TurnkeyProvider
    config={config}
    callbacks={{
      onError: (e) => record('error', { message: e.message, code: (e as { code?: string }).code, cause: String((e as { cause?: unknown }).cause ?? '') }),
      onAuthenticationSuccess: ({ action, method, identifier }) => record('authenticated', { action, method, identifier }),
    }}
  >
    <State />
  </TurnkeyProvider>,
);
