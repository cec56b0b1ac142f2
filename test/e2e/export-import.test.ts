// Export and import round trips with the real @turnkey/crypto client functions, verifying bundles
// against the signer key `sigil init` printed (dangerouslyOverrideSignerPublicKey): wallets,
// accounts and private keys (hex and SOLANA formats) out; mnemonics and keys in, with addresses and
// signing that match. Rejections: other organization or user, reuse, expiry, tampering, an invalid
// mnemonic, a client trusting a different signer. The exported flag governs delete_*.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptExportBundle, encryptPrivateKeyToBundle, encryptWalletToBundle, generateP256KeyPair } from '@turnkey/crypto';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { verifyMessage } from 'viem';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { generateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient } from '../helpers/clients.js';
import { dbSnapshot, dbText } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
let api: ReturnType<typeof sdkServerClient>;
let org: string;
let signer: string;

beforeAll(async () => {
  // A short import-bundle lifetime so expiry can be observed.
  sigil = await startSigil({ SIGIL_IMPORT_BUNDLE_TTL_SECONDS: '3' });
  const root = sigil.root;
  api = sdkServerClient(sigil);
  org = root.organizationId;
  signer = root.signerPublicKey;
});
afterAll(async () => {
  await sigil?.stop();
});

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;
const SOL = { curve: 'CURVE_ED25519', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/501'/0'/0'", addressFormat: 'ADDRESS_FORMAT_SOLANA' } as const;

describe('export', () => {
  it('export_wallet: decryptExportBundle returns the mnemonic, which derives the same addresses', async () => {
    const { walletId, addresses } = await api.createWallet({ walletName: 'to-export', accounts: [ETH, { ...ETH, path: "m/44'/60'/0'/0/7" }] });
    const target = generateP256KeyPair();
    const r = await api.exportWallet({ walletId, targetPublicKey: target.publicKeyUncompressed });
    const mnemonic = await decryptExportBundle({ exportBundle: r.exportBundle, embeddedKey: target.privateKey, organizationId: org, returnMnemonic: true, dangerouslyOverrideSignerPublicKey: signer });
    expect(mnemonic.split(' ')).toHaveLength(12);
    expect(mnemonicToAccount(mnemonic).address).toBe(addresses[0]);
    expect(mnemonicToAccount(mnemonic, { addressIndex: 7 }).address).toBe(addresses[1]);
    expect(await dbText(sigil)).not.toContain(mnemonic);
    expect((await api.getWallet({ walletId })).wallet.exported).toBe(true);

    // A compressed target key works too, and a client trusting another signer key refuses the bundle.
    const target2 = generateP256KeyPair();
    const r2 = await api.exportWallet({ walletId, targetPublicKey: target2.publicKey });
    await expect(
      decryptExportBundle({ exportBundle: r2.exportBundle, embeddedKey: target2.privateKey, organizationId: org, returnMnemonic: true, dangerouslyOverrideSignerPublicKey: generateP256KeyPair().publicKeyUncompressed }),
    ).rejects.toThrow();
    await expect(
      decryptExportBundle({ exportBundle: r2.exportBundle, embeddedKey: target2.privateKey, organizationId: '00000000-0000-4000-8000-000000000000', returnMnemonic: true, dangerouslyOverrideSignerPublicKey: signer }),
    ).rejects.toThrow();
  });

  it('export_wallet_account and export_private_key, in hex and SOLANA formats', async () => {
    const { addresses } = await api.createWallet({ walletName: 'accounts-export', accounts: [ETH, SOL] });
    const target = generateP256KeyPair();
    const eth = await api.exportWalletAccount({ address: addresses[0], targetPublicKey: target.publicKeyUncompressed });
    const ethKey = await decryptExportBundle({ exportBundle: eth.exportBundle, embeddedKey: target.privateKey, organizationId: org, returnMnemonic: false, dangerouslyOverrideSignerPublicKey: signer });
    expect(privateKeyToAccount(`0x${ethKey.replace(/^0x/, '')}` as `0x${string}`).address).toBe(addresses[0]);

    const sol = await api.exportWalletAccount({ address: addresses[1], targetPublicKey: target.publicKeyUncompressed });
    const solKey = await decryptExportBundle({ exportBundle: sol.exportBundle, embeddedKey: target.privateKey, organizationId: org, returnMnemonic: false, keyFormat: 'SOLANA', dangerouslyOverrideSignerPublicKey: signer });
    expect(Keypair.fromSecretKey(bs58.decode(solKey)).publicKey.toBase58()).toBe(addresses[1]);

    // Keys at rest: neither the exported keys nor the mnemonic appear anywhere in the stored data.
    const stored = (await dbText(sigil)).toLowerCase();
    for (const secret of [ethKey.replace(/^0x/, ''), Buffer.from(bs58.decode(solKey)).subarray(0, 32).toString('hex')]) {
      expect(stored).not.toContain(secret.toLowerCase());
      expect(stored).not.toContain(Buffer.from(secret, 'hex').toString('base64').toLowerCase());
    }

    const { privateKeys } = await api.createPrivateKeys({ privateKeys: [{ privateKeyName: 'exp-key', curve: 'CURVE_SECP256K1', privateKeyTags: [], addressFormats: ['ADDRESS_FORMAT_ETHEREUM'] }] });
    const pk = await api.exportPrivateKey({ privateKeyId: privateKeys[0].privateKeyId!, targetPublicKey: target.publicKeyUncompressed });
    const pkHex = await decryptExportBundle({ exportBundle: pk.exportBundle, embeddedKey: target.privateKey, organizationId: org, returnMnemonic: false, dangerouslyOverrideSignerPublicKey: signer });
    expect(privateKeyToAccount(`0x${pkHex.replace(/^0x/, '')}` as `0x${string}`).address).toBe(privateKeys[0].addresses![0].address);
    expect((await api.getPrivateKey({ privateKeyId: privateKeys[0].privateKeyId! })).privateKey.exported).toBe(true);
  });

  it('the exported flag decides what delete_* allows', async () => {
    const { walletId, addresses } = await api.createWallet({ walletName: 'flagged', accounts: [ETH, { ...ETH, path: "m/44'/60'/0'/0/1" }] });
    const other = await api.createWallet({ walletName: 'unflagged', accounts: [ETH] });
    const accounts = (await api.getWalletAccounts({ walletId })).accounts;
    const target = generateP256KeyPair();
    // Exporting one account lets that account go, but not the wallet.
    await api.exportWalletAccount({ address: addresses[1], targetPublicKey: target.publicKeyUncompressed });
    await expect(api.deleteWalletAccounts({ walletAccountIds: [accounts[0].walletAccountId] })).rejects.toThrow(/has not been exported/);
    await api.deleteWalletAccounts({ walletAccountIds: [accounts[1].walletAccountId] });
    await expect(api.deleteWallets({ walletIds: [walletId] })).rejects.toThrow(/has not been exported/);
    await api.exportWallet({ walletId, targetPublicKey: target.publicKeyUncompressed });
    const gone = await api.deleteWallets({ walletIds: [walletId] });
    expect(gone.walletIds).toEqual([walletId]);
    await expect(api.deleteWallets({ walletIds: [other.walletId] })).rejects.toThrow(/has not been exported/);

    const { privateKeys } = await api.createPrivateKeys({ privateKeys: [{ privateKeyName: 'del-key', curve: 'CURVE_ED25519', privateKeyTags: [], addressFormats: [] }] });
    const id = privateKeys[0].privateKeyId!;
    await expect(api.deletePrivateKeys({ privateKeyIds: [id] })).rejects.toThrow(/has not been exported/);
    await api.exportPrivateKey({ privateKeyId: id, targetPublicKey: target.publicKeyUncompressed });
    // For exported keys deleteWithoutExport is ignored either way.
    expect((await api.deletePrivateKeys({ privateKeyIds: [id], deleteWithoutExport: false })).privateKeyIds).toEqual([id]);
  });
});

describe('import', () => {
  it('import_wallet: a mnemonic sealed with encryptWalletToBundle comes back with the same addresses, and signs', async () => {
    const mnemonic = generateMnemonic(wordlist, 256);
    const { importBundle } = await api.initImportWallet({ userId: sigil.root.userId });
    const encryptedBundle = await encryptWalletToBundle({ mnemonic, importBundle, userId: sigil.root.userId, organizationId: org, dangerouslyOverrideSignerPublicKey: signer });
    const imported = await api.importWallet({ userId: sigil.root.userId, walletName: 'imported', encryptedBundle, accounts: [ETH] });
    expect(imported.addresses[0]).toBe(mnemonicToAccount(mnemonic).address);
    expect((await api.getWallet({ walletId: imported.walletId })).wallet).toMatchObject({ imported: true, exported: false });
    const sig = await api.signRawPayload({ signWith: imported.addresses[0], payload: '0x' + 'ab'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
    expect(sig.r).toMatch(/^[0-9a-f]{64}$/);
    const activity = (await api.getActivity({ activityId: imported.activity.id })).activity as any;
    expect(activity.intent.importWalletIntent.encryptedBundle).toBe('<redacted>');

    // The same bundle again: refused as used; nothing changes.
    const before = await dbSnapshot(sigil);
    await expect(api.importWallet({ userId: sigil.root.userId, walletName: 'again', encryptedBundle, accounts: [ETH] })).rejects.toThrow(/import bundle already used/);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('import_private_key in HEXADECIMAL and SOLANA formats; the keys sign', async () => {
    const eth = privateKeyToAccount(`0x${'42'.repeat(32)}`);
    const b1 = await api.initImportPrivateKey({ userId: sigil.root.userId });
    const enc1 = await encryptPrivateKeyToBundle({ privateKey: '42'.repeat(32), keyFormat: 'HEXADECIMAL', importBundle: b1.importBundle, userId: sigil.root.userId, organizationId: org, dangerouslyOverrideSignerPublicKey: signer });
    const k1 = await api.importPrivateKey({ userId: sigil.root.userId, privateKeyName: 'imp-eth', encryptedBundle: enc1, curve: 'CURVE_SECP256K1', addressFormats: ['ADDRESS_FORMAT_ETHEREUM'] });
    expect(k1.addresses[0]).toMatchObject({ address: eth.address });
    const signed = await api.signRawPayload({ signWith: eth.address, payload: '0x' + Buffer.from('\x19Ethereum Signed Message:\n2hi').toString('hex'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_KECCAK256' });
    const sig = `0x${signed.r}${signed.s}${signed.v === '00' ? '1b' : '1c'}` as `0x${string}`;
    expect(await verifyMessage({ address: eth.address, message: 'hi', signature: sig })).toBe(true);

    const sol = Keypair.generate();
    const b2 = await api.initImportPrivateKey({ userId: sigil.root.userId });
    const enc2 = await encryptPrivateKeyToBundle({ privateKey: bs58.encode(sol.secretKey), keyFormat: 'SOLANA', importBundle: b2.importBundle, userId: sigil.root.userId, organizationId: org, dangerouslyOverrideSignerPublicKey: signer });
    const k2 = await api.importPrivateKey({ userId: sigil.root.userId, privateKeyName: 'imp-sol', encryptedBundle: enc2, curve: 'CURVE_ED25519', addressFormats: ['ADDRESS_FORMAT_SOLANA'] });
    expect(k2.addresses[0].address).toBe(sol.publicKey.toBase58());
    expect((await api.getPrivateKey({ privateKeyId: k2.privateKeyId })).privateKey.imported).toBe(true);
  });

  it('refuses an invalid mnemonic, tampering, other users, other organizations and expired bundles, changing nothing', async () => {
    const userId = sigil.root.userId;
    const submit = (params: unknown) =>
      rawPost(`${sigil.url}/public/v1/submit/import_wallet`, activityBody(org, 'ACTIVITY_TYPE_IMPORT_WALLET', params), { key: sigil.root });

    const b = await api.initImportWallet({ userId });
    // The client seals whatever text it is given; Sigil checks the BIP39 checksum.
    const bad = await encryptWalletToBundle({ mnemonic: 'abandon '.repeat(11) + 'zoo', importBundle: b.importBundle, userId, organizationId: org, dangerouslyOverrideSignerPublicKey: signer });
    {
      const before = await dbSnapshot(sigil);
      const res = await submit({ userId, walletName: 'bad', encryptedBundle: bad, accounts: [ETH] });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/invalid mnemonic/);
      expect(await dbSnapshot(sigil)).toEqual(before);
    }

    const good = await encryptWalletToBundle({ mnemonic: generateMnemonic(wordlist), importBundle: (await api.initImportWallet({ userId })).importBundle, userId, organizationId: org, dangerouslyOverrideSignerPublicKey: signer });
    const parsed = JSON.parse(good);
    const tampered = JSON.stringify({ ...parsed, ciphertext: parsed.ciphertext.slice(0, -2) + (parsed.ciphertext.endsWith('00') ? '01' : '00') });
    const before = await dbSnapshot(sigil);
    const t = await submit({ userId, walletName: 'tampered', encryptedBundle: tampered, accounts: [ETH] });
    expect(t.status).toBe(400);
    expect(t.body.message).toMatch(/does not open with any import bundle/);
    // Another user of the organization cannot import for root, nor use root's bundle as their own.
    const other = await submit({ userId: '00000000-0000-4000-8000-000000000000', walletName: 'x', encryptedBundle: good, accounts: [ETH] });
    expect(other.status).toBe(404);
    expect(await dbSnapshot(sigil)).toEqual(before);

    // A bundle sealed with another organization's import bundle does not open here.
    const foreign = await encryptWalletToBundle({
      mnemonic: generateMnemonic(wordlist),
      importBundle: (await api.initImportWallet({ userId })).importBundle,
      userId,
      organizationId: org,
      dangerouslyOverrideSignerPublicKey: signer,
    });
    await expect(
      encryptWalletToBundle({ mnemonic: generateMnemonic(wordlist), importBundle: b.importBundle, userId, organizationId: '00000000-0000-4000-8000-000000000000', dangerouslyOverrideSignerPublicKey: signer }),
    ).rejects.toThrow(/organization id does not match/);
    await expect(
      encryptWalletToBundle({ mnemonic: generateMnemonic(wordlist), importBundle: b.importBundle, userId: '00000000-0000-4000-8000-000000000000', organizationId: org, dangerouslyOverrideSignerPublicKey: signer }),
    ).rejects.toThrow(/user id does not match/);

    // Expiry: bundles live 3 seconds in this deployment.
    await new Promise((r) => setTimeout(r, 3200));
    const expired = await submit({ userId, walletName: 'late', encryptedBundle: foreign, accounts: [ETH] });
    expect(expired.status).toBe(400);
    expect(expired.body.message).toMatch(/import bundle expired/);
  });

  it('init_import targets the caller only', async () => {
    const k = generateP256KeyPair();
    const { userIds } = await api.createUsers({ users: [{ userName: 'someone', apiKeys: [{ apiKeyName: 'k', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }] });
    await expect(api.initImportWallet({ userId: userIds[0] })).rejects.toThrow(/imports must target your own user/);
  });
});
