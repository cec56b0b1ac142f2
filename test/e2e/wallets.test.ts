// Wallets and private keys through the official SDKs against a real `sigil serve`: creation on
// several chains (addresses re-derived from the returned public keys by the chains' own libraries),
// reads, pagination over 1,000 accounts in both directions, updates, delete rules, tags, and key
// material at rest only as ciphertext.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicKeyToAddress } from 'viem/accounts';
import { PublicKey } from '@solana/web3.js';
import * as btc from '@scure/btc-signer';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient } from '../helpers/clients.js';
import { dbSnapshot, dbText } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
let api: ReturnType<typeof sdkServerClient>;
beforeAll(async () => {
  sigil = await startSigil();
  api = sdkServerClient(sigil);
});
afterAll(async () => {
  await sigil?.stop();
});

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;
const SOL = { curve: 'CURVE_ED25519', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/501'/0'/0'", addressFormat: 'ADDRESS_FORMAT_SOLANA' } as const;
const BTC_WPKH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/84'/0'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH' } as const;
const BTC_TR = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/86'/1'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2TR' } as const;

describe('wallets', () => {
  it('create_wallet derives accounts whose addresses match their public keys on each chain', async () => {
    const created = await api.createWallet({ walletName: 'main', accounts: [ETH, SOL, BTC_WPKH, BTC_TR], mnemonicLength: 24 });
    expect(created.addresses).toHaveLength(4);
    expect(created.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const { accounts } = await api.getWalletAccounts({ walletId: created.walletId });
    expect(accounts.map((a) => a.address)).toEqual(created.addresses);
    const [eth, sol, wpkh, tr] = accounts;
    const ethPub = secp256k1.Point.fromHex(eth.publicKey!).toHex(false);
    expect(publicKeyToAddress(`0x${ethPub}`)).toBe(eth.address);
    expect(new PublicKey(Buffer.from(sol.publicKey!, 'hex')).toBase58()).toBe(sol.address);
    expect(btc.p2wpkh(Buffer.from(wpkh.publicKey!, 'hex')).address).toBe(wpkh.address);
    expect(btc.p2tr(Buffer.from(tr.publicKey!, 'hex').subarray(1), undefined, btc.TEST_NETWORK).address).toBe(tr.address);
    expect(eth).toMatchObject({ organizationId: sigil.root.organizationId, walletId: created.walletId, curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: ETH.path });

    const wallet = await api.getWallet({ walletId: created.walletId });
    expect(wallet.wallet).toMatchObject({ walletId: created.walletId, walletName: 'main', exported: false, imported: false });
    expect((await api.getWallets({})).wallets.map((w) => w.walletId)).toContain(created.walletId);

    const byAddress = await api.getWalletAccount({ walletId: created.walletId, address: sol.address });
    expect(byAddress.account.walletAccountId).toBe(sol.walletAccountId);
    // ed25519 paths are all-hardened: the soft spelling finds the same account.
    const byPath = await api.getWalletAccount({ walletId: created.walletId, path: "m/44'/501'/0'/0" });
    expect(byPath.account.walletAccountId).toBe(sol.walletAccountId);
    const withDetails = await api.getWalletAccounts({ walletId: created.walletId, includeWalletDetails: true });
    expect(withDetails.accounts[0].walletDetails).toMatchObject({ walletId: created.walletId, walletName: 'main', exported: false, imported: false });
    expect(accounts[0].walletDetails).toBeUndefined();
  });

  it('create_wallet_accounts adds accounts, previews with persist false, and refuses reused paths', async () => {
    const { walletId } = await api.createWallet({ walletName: 'more', accounts: [ETH] });
    const preview = await api.createWalletAccounts({ walletId, accounts: [{ ...ETH, path: "m/44'/60'/0'/0/1" }], persist: false });
    expect(preview.addresses).toHaveLength(1);
    expect((await api.getWalletAccounts({ walletId })).accounts).toHaveLength(1);
    const added = await api.createWalletAccounts({ walletId, accounts: [{ ...ETH, path: "m/44'/60'/0'/0/1", name: 'second' }] });
    expect(added.addresses).toEqual(preview.addresses);
    const accounts = (await api.getWalletAccounts({ walletId })).accounts;
    expect(accounts.map((a) => a.name)).toEqual([undefined, 'second']);
    await expect(api.createWalletAccounts({ walletId, accounts: [ETH] })).rejects.toThrow(/invalid path: m\/44'\/60'\/0'\/0\/0 is already used/);
    await expect(api.createWalletAccounts({ walletId, accounts: [{ ...ETH, path: "m/44'/60'/0'/0/2", name: 'second' }] })).rejects.toThrow(
      /wallet account named "second" already exists/,
    );
  });

  it('refuses curve/format mismatches, bad paths and bad mnemonic lengths, changing nothing', async () => {
    const before = await dbSnapshot(sigil);
    const submit = (params: unknown) =>
      rawPost(`${sigil.url}/public/v1/submit/create_wallet`, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_WALLET', params), { key: sigil.root });
    const mismatch = await submit({ walletName: 'bad', accounts: [{ ...SOL, addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.message).toMatch(/ADDRESS_FORMAT_ETHEREUM/);
    const badPath = await submit({ walletName: 'bad', accounts: [{ ...ETH, path: 'm/44x/60' }] });
    expect(badPath.status).toBe(400);
    expect(badPath.body.message).toMatch(/^invalid path/);
    const twice = await submit({ walletName: 'bad', accounts: [ETH, ETH] });
    expect(twice.status).toBe(400);
    expect(twice.body.message).toMatch(/repeats accounts\[0\]\.path/);
    const badLength = await submit({ walletName: 'bad', accounts: [ETH], mnemonicLength: 13 });
    expect(badLength.status).toBe(400);
    expect(badLength.body.message).toMatch(/invalid mnemonic length 13/);
    const badFormat = await submit({ walletName: 'bad', accounts: [{ ...ETH, addressFormat: 'ADDRESS_FORMAT_NOPE' }] });
    expect(badFormat.status).toBe(400);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('pages through 1,000 accounts in both directions, each exactly once', async () => {
    const { walletId } = await api.createWallet({ walletName: 'many', accounts: [] });
    for (let batch = 0; batch < 10; batch++) {
      const accounts = Array.from({ length: 100 }, (_, i) => ({ ...ETH, path: `m/44'/60'/0'/0/${batch * 100 + i}` }));
      await api.createWalletAccounts({ walletId, accounts });
    }
    const forward: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await api.getWalletAccounts({ walletId, paginationOptions: { limit: '100', ...(after ? { after } : {}) } });
      forward.push(...page.accounts.map((a) => a.walletAccountId));
      if (page.accounts.length < 100) break;
      after = page.accounts[page.accounts.length - 1].walletAccountId;
    }
    expect(forward).toHaveLength(1000);
    expect(new Set(forward).size).toBe(1000);
    const backward: string[] = [];
    let before: string | undefined = forward[forward.length - 1];
    backward.push(before);
    for (;;) {
      const page = await api.getWalletAccounts({ walletId, paginationOptions: { limit: '37', before } });
      backward.unshift(...page.accounts.map((a) => a.walletAccountId));
      if (page.accounts.length < 37) break;
      before = page.accounts[0].walletAccountId;
    }
    expect(backward).toEqual(forward);
    const defaultPage = await api.getWalletAccounts({ walletId });
    expect(defaultPage.accounts).toHaveLength(10);
    await expect(api.getWalletAccounts({ walletId, paginationOptions: { limit: '101' } })).rejects.toThrow(/from 1 to 100/);
    // Organization-wide listing includes accounts of every wallet.
    const all = await api.getWalletAccounts({ paginationOptions: { limit: '100' } } as never);
    expect(all.accounts.length).toBe(100);
  });

  it('update_wallet renames; delete_wallets refuses never-exported wallets unless deleteWithoutExport', async () => {
    const { walletId } = await api.createWallet({ walletName: 'temp', accounts: [ETH] });
    await api.updateWallet({ walletId, walletName: 'renamed' });
    expect((await api.getWallet({ walletId })).wallet.walletName).toBe('renamed');
    await expect(api.deleteWallets({ walletIds: [walletId] })).rejects.toThrow(/has not been exported.*deleteWithoutExport/);
    const account = (await api.getWalletAccounts({ walletId })).accounts[0];
    await expect(api.deleteWalletAccounts({ walletAccountIds: [account.walletAccountId] })).rejects.toThrow(/has not been exported/);
    const removedAccount = await api.deleteWalletAccounts({ walletAccountIds: [account.walletAccountId], deleteWithoutExport: true });
    expect(removedAccount.walletAccountIds).toEqual([account.walletAccountId]);
    const removed = await api.deleteWallets({ walletIds: [walletId], deleteWithoutExport: true });
    expect(removed.walletIds).toEqual([walletId]);
    await expect(api.getWallet({ walletId })).rejects.toThrow(/wallet not found/);
  });
});

describe('private keys', () => {
  it('create, read, tag and delete', async () => {
    const created = await api.createPrivateKeys({
      privateKeys: [
        { privateKeyName: 'eth-key', curve: 'CURVE_SECP256K1', privateKeyTags: [], addressFormats: ['ADDRESS_FORMAT_ETHEREUM', 'ADDRESS_FORMAT_TRON'] },
        { privateKeyName: 'sol-key', curve: 'CURVE_ED25519', privateKeyTags: [], addressFormats: ['ADDRESS_FORMAT_SOLANA'] },
      ],
    });
    expect(created.privateKeys).toHaveLength(2);
    const [ethKey, solKey] = created.privateKeys;
    const got = await api.getPrivateKey({ privateKeyId: ethKey.privateKeyId! });
    expect(got.privateKey).toMatchObject({ privateKeyName: 'eth-key', curve: 'CURVE_SECP256K1', exported: false, imported: false, privateKeyTags: [] });
    const pub = secp256k1.Point.fromHex(got.privateKey.publicKey).toHex(false);
    expect(got.privateKey.addresses[0]).toEqual({ format: 'ADDRESS_FORMAT_ETHEREUM', address: publicKeyToAddress(`0x${pub}`) });
    expect(got.privateKey.addresses[1].address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    expect((await api.getPrivateKeys({})).privateKeys.map((k) => k.privateKeyId)).toEqual(
      expect.arrayContaining([ethKey.privateKeyId, solKey.privateKeyId]),
    );

    const tag = await api.createPrivateKeyTag({ privateKeyTagName: 'hot', privateKeyIds: [ethKey.privateKeyId!] });
    expect((await api.getPrivateKey({ privateKeyId: ethKey.privateKeyId! })).privateKey.privateKeyTags).toEqual([tag.privateKeyTagId]);
    await api.updatePrivateKeyTag({
      privateKeyTagId: tag.privateKeyTagId,
      newPrivateKeyTagName: 'warm',
      addPrivateKeyIds: [solKey.privateKeyId!],
      removePrivateKeyIds: [ethKey.privateKeyId!],
    });
    const tags = await api.listPrivateKeyTags({});
    expect(tags.privateKeyTags).toEqual([expect.objectContaining({ tagId: tag.privateKeyTagId, tagName: 'warm', tagType: 'TAG_TYPE_PRIVATE_KEY' })]);
    const deletedTags = await api.deletePrivateKeyTags({ privateKeyTagIds: [tag.privateKeyTagId] });
    expect(deletedTags.privateKeyIds).toEqual([solKey.privateKeyId]);

    await expect(api.deletePrivateKeys({ privateKeyIds: [solKey.privateKeyId!] })).rejects.toThrow(/has not been exported/);
    const deleted = await api.deletePrivateKeys({ privateKeyIds: [solKey.privateKeyId!], deleteWithoutExport: true });
    expect(deleted.privateKeyIds).toEqual([solKey.privateKeyId]);
    await expect(api.getPrivateKey({ privateKeyId: solKey.privateKeyId! })).rejects.toThrow(/private key not found/);
    await expect(
      api.createPrivateKeys({ privateKeys: [{ privateKeyName: 'p256', curve: 'CURVE_P256', privateKeyTags: [], addressFormats: ['ADDRESS_FORMAT_ETHEREUM'] }] }),
    ).rejects.toThrow(/ADDRESS_FORMAT_ETHEREUM/);
  });
});

describe('keys at rest', () => {
  it('the database holds no mnemonic word sequence and only sealed key material', async () => {
    await api.createWallet({ walletName: 'at-rest', accounts: [ETH, SOL] });
    const snapshot = await dbSnapshot(sigil);
    // Sealed with the organization's own data key, which the ciphertext names (docs/operator-guide.md "Custody").
    const sealed = /^v3:[0-9a-f-]{36}\.[0-9a-f]{24}:[A-Za-z0-9+/=]+$/;
    for (const row of snapshot.wallets as { mnemonic: string }[]) expect(row.mnemonic).toMatch(sealed);
    for (const row of snapshot.wallet_accounts as { private_key: string }[]) expect(row.private_key).toMatch(sealed);
    for (const row of snapshot.private_keys as { private_key: string }[]) expect(row.private_key).toMatch(sealed);
    // No run of 12 or more BIP39 words anywhere in the stored data.
    const words = new Set(wordlist);
    const tokens = (await dbText(sigil)).toLowerCase().split(/[^a-z]+/);
    let run = 0;
    let longest = 0;
    for (const t of tokens) {
      run = words.has(t) ? run + 1 : 0;
      longest = Math.max(longest, run);
    }
    expect(longest).toBeLessThan(12);
  });
});
