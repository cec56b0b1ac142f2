// The @turnkey/sdk-browser page of the browser test (test/e2e/wallet-kit.test.ts;
// docs/embedded-wallets.md "Embedded wallets: the browser kits"): the published package as an app
// imports it, handed to the test as `window.sdkBrowser`; the page's `window.SIGIL_KIT` names Sigil's API
// and the app's organization.
import { Turnkey, SessionType } from '@turnkey/sdk-browser';

declare global {
  interface Window {
    sdkBrowser: { Turnkey: typeof Turnkey; SessionType: typeof SessionType };
  }
}

window.sdkBrowser = { Turnkey, SessionType };
document.getElementById('root')!.textContent = 'sdk-browser ready';
