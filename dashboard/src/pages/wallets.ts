// Wallets page: every wallet (list_wallets) with its accounts and addresses (list_wallet_accounts),
// and a form that creates a wallet with one account (create_wallet, swagger v1CreateWalletIntent).
import { resultOf, type Json } from '../api.js';
import type { PageContext } from './context.js';
import { busy, empty, errorBox, field, h, heading, loading, message, mono, pretty, replace, select, time } from '../dom.js';

// One first account per chain, with the usual derivation path (v1WalletAccountParams).
const PRESETS: Record<string, { label: string; account: Json }> = {
  ethereum: { label: 'Ethereum', account: { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } },
  solana: { label: 'Solana', account: { curve: 'CURVE_ED25519', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/501'/0'/0'", addressFormat: 'ADDRESS_FORMAT_SOLANA' } },
  bitcoin: { label: 'Bitcoin (native segwit)', account: { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/84'/0'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH' } },
  cosmos: { label: 'Cosmos', account: { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/118'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_COSMOS' } },
};

function createForm(ctx: PageContext): HTMLElement {
  const nameInput = h('input', { type: 'text', name: 'walletName', required: true, autocomplete: 'off' });
  const chain = select('chain', Object.entries(PRESETS).map(([k, p]) => [k, p.label]), 'ethereum');
  const button = h('button', { type: 'submit' }, 'Create wallet');
  const out = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { className: 'card', 'aria-labelledby': 'create-wallet-title' },
    h('h2', { id: 'create-wallet-title' }, 'Create a wallet'),
    h('div', { className: 'row' }, field('Wallet name', nameInput), field('First account', chain)),
    button,
    out,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void busy(button, async () => {
      replace(out);
      try {
        const walletName = nameInput.value.trim();
        if (!walletName) throw new Error('Enter a wallet name.');
        const activity = await ctx.api.submit('create_wallet', 'ACTIVITY_TYPE_CREATE_WALLET', { walletName, accounts: [PRESETS[chain.value].account] });
        const result = resultOf(activity, 'createWalletResult');
        ctx.flash(result ? `Wallet "${walletName}" created: ${result.addresses.join(', ')}` : `The wallet waits for approval (${pretty(activity.status, 'ACTIVITY_STATUS_')}).`);
        ctx.refresh();
      } catch (err) {
        replace(out, errorBox(message(err)));
      }
    });
  });
  return form;
}

export async function walletsPage(ctx: PageContext): Promise<void> {
  const body = h('div', {}, loading());
  ctx.main.append(heading('Wallets'), createForm(ctx), body);
  const { wallets } = await ctx.api.query<Json>('list_wallets');
  if (!wallets.length) return replace(body, empty('No wallets yet.', 'Create one with the form above.'));
  const accounts = await Promise.all((wallets as Json[]).map((w) => ctx.api.query<Json>('list_wallet_accounts', { walletId: w.walletId, paginationOptions: { limit: '100' } })));
  const list = h('ul', { className: 'cards' });
  (wallets as Json[]).forEach((w, i) => {
    const rows = (accounts[i].accounts as Json[]).map((a) =>
      h('tr', {}, h('td', { 'data-label': 'Address' }, mono(a.address)), h('td', { 'data-label': 'Format' }, pretty(a.addressFormat, 'ADDRESS_FORMAT_')), h('td', { 'data-label': 'Path' }, mono(a.path))),
    );
    list.append(
      h(
        'li',
        { className: 'card wallet-card', 'data-wallet-id': w.walletId },
        h('h2', {}, w.walletName),
        h('p', { className: 'hint' }, mono(w.walletId), ` · created ${time(w.createdAt)}`, w.exported ? ' · exported' : '', w.imported ? ' · imported' : ''),
        rows.length
          ? h(
              'div',
              { className: 'table-wrap' },
              h('table', {}, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Address'), h('th', { scope: 'col' }, 'Format'), h('th', { scope: 'col' }, 'Path'))), h('tbody', {}, ...rows)),
            )
          : empty('No accounts.'),
      ),
    );
  });
  replace(body, list);
}
