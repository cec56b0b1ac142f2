// Per-organization data keys and crypto-shredding (docs/operator-guide.md "Custody"; migration 032), through
// @turnkey/sdk-server and @turnkey/crypto, checked with viem: a sub-organization's secrets are sealed
// with its own key (read from the raw rows); deleting it destroys the key, so its rows put back
// without the key (what lingers in a later backup) open no more, while the rows with the key (an
// earlier backup) still export the mnemonic; on SQLite a real `sigil backup` taken after the deletion
// holds no copy of the wrapped key (secure delete) and one taken before restores and exports; and a
// deployment whose secrets were sealed before migration 032 keeps signing after it (while and after
// they are re-sealed in place: organization-keys-migration.test.ts).
// Runs on SQLite, and on PostgreSQL with SIGIL_TEST_DATABASE_URL.
import { afterEach, describe, expect, it } from 'vitest';
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { decryptExportBundle, generateP256KeyPair } from '@turnkey/crypto';
import { mnemonicToAccount } from 'viem/accounts';
import { recoverAddress, serializeSignature } from 'viem';
import { freshDeploymentEnv, runSigil, serve, startSigil, terminate, testDatabaseUrl, type SigilInstance } from '../helpers/sigil.js';
import { newKey, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { execSql } from '../helpers/db-snapshot.js';
import { firstFormatSeal, keysInDatabase, openWithAny, type Location } from '../helpers/sealed-rows.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A real process: the migration test stops it and serves the same deployment again. */
async function started(): Promise<SigilInstance> {
  const s = await startSigil({}, { process: true });
  cleanups.push(() => s.stop());
  return s;
}

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;

async function subOrganization(sigil: SigilInstance) {
  const key = newKey();
  const r = await sdkServerClient(sigil).createSubOrganization({
    subOrganizationName: `end user ${randomBytes(3).toString('hex')}`,
    rootUsers: [{ userName: 'end user', userEmail: 'end@example.com', apiKeys: [{ apiKeyName: 'own', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
    rootQuorumThreshold: 1,
    wallet: { walletName: 'default', accounts: [ETH] },
  });
  return { id: r.subOrganizationId, key, walletId: r.wallet!.walletId, address: r.wallet!.addresses[0] as `0x${string}` };
}

/** Signs a random digest as the sub-organization's user; viem recovers the account's address. */
async function expectSigns(sigil: SigilInstance, key: KeyPair, orgId: string, address: `0x${string}`) {
  const hash = `0x${randomBytes(32).toString('hex')}` as const;
  const sig = await sdkServerClient(sigil, key, orgId).signRawPayload({ signWith: address, payload: hash, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
  const signature = serializeSignature({ r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number.parseInt(sig.v, 16) % 2 });
  expect(await recoverAddress({ hash, signature })).toBe(address);
}

/** Exports the wallet's mnemonic as the sub-organization's user and returns its first ETH address. */
async function exportedAddress(sigil: SigilInstance, key: KeyPair, orgId: string, walletId: string) {
  const target = generateP256KeyPair();
  const r = await sdkServerClient(sigil, key, orgId).exportWallet({ walletId, targetPublicKey: target.publicKeyUncompressed });
  const mnemonic = await decryptExportBundle({
    exportBundle: r.exportBundle,
    embeddedKey: target.privateKey,
    organizationId: orgId,
    returnMnemonic: true,
    dangerouslyOverrideSignerPublicKey: sigil.root.signerPublicKey,
  });
  return mnemonicToAccount(mnemonic).address;
}

/** The rows a restore needs to serve the sub-organization's wallet to its own user, as stored. */
const SUB_ORG_TABLES = ['organizations', 'users', 'api_keys', 'root_quorum_members', 'wallets', 'wallet_accounts'] as const;

async function rowsOf(sigil: SigilInstance, orgId: string) {
  const out: Record<string, any[]> = {};
  for (const t of SUB_ORG_TABLES) out[t] = await execSql(sigil, `SELECT * FROM ${t} WHERE ${t === 'organizations' ? 'id' : 'organization_id'} = ?`, [orgId]);
  out.organization_keys = await execSql(sigil, 'SELECT * FROM organization_keys WHERE organization_id = ?', [orgId]);
  return out;
}

async function putBack(sigil: SigilInstance, rows: Record<string, any[]>, tables: readonly string[]) {
  for (const t of tables) {
    for (const row of rows[t]) {
      const cols = Object.keys(row);
      await execSql(sigil, `INSERT INTO ${t} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, Object.values(row));
    }
  }
}

describe('per-organization data keys', () => {
  it('seal a sub-organization with its own key; deleting it shreds what it sealed, the key put back opens it again', async () => {
    const sigil = await started();
    const sub = await subOrganization(sigil);
    const other = await subOrganization(sigil);
    await expectSigns(sigil, sub.key, sub.id, sub.address);

    // The raw rows: one key per organization, and the sub-organization's secrets name it.
    const before = await rowsOf(sigil, sub.id);
    expect(before.organization_keys).toHaveLength(1);
    const { key_id: keyId, wrapped_key: wrappedKey } = before.organization_keys[0];
    expect(wrappedKey).not.toContain(keyId);
    expect(before.wallets[0].mnemonic).toMatch(new RegExp(`^v3:${sub.id}\\.${keyId}:`));
    expect(before.wallet_accounts[0].private_key).toMatch(new RegExp(`^v3:${sub.id}\\.${keyId}:`));
    const [otherKey] = await execSql(sigil, 'SELECT key_id FROM organization_keys WHERE organization_id = ?', [other.id]);
    expect(otherKey.key_id).not.toBe(keyId);

    await sdkServerClient(sigil, sub.key, sub.id).deleteSubOrganization({ deleteWithoutExport: true });
    expect(await execSql(sigil, 'SELECT * FROM organization_keys WHERE organization_id = ?', [sub.id])).toEqual([]);
    expect(await execSql(sigil, 'SELECT * FROM wallets WHERE organization_id = ?', [sub.id])).toEqual([]);

    // Everything of the sub-organization but its key, as lingering rows give it back: nothing opens.
    await putBack(sigil, before, SUB_ORG_TABLES);
    await expect(exportedAddress(sigil, sub.key, sub.id, sub.walletId)).rejects.toThrow(/data key .* no longer exists \(destroyed with its organization\)/);
    await expect(expectSigns(sigil, sub.key, sub.id, sub.address)).rejects.toThrow(/no longer exists/);
    // The other sub-organization is untouched.
    await expectSigns(sigil, other.key, other.id, other.address);

    // With its key (an earlier backup), the wallet exports and signs again.
    await putBack(sigil, before, ['organization_keys']);
    expect(await exportedAddress(sigil, sub.key, sub.id, sub.walletId)).toBe(sub.address);
    await expectSigns(sigil, sub.key, sub.id, sub.address);
  });

  it.runIf(!testDatabaseUrl())('sigil backup: taken before the deletion it restores and exports; taken after, it holds no copy of the key', async () => {
    const sigil = await started();
    const sub = await subOrganization(sigil);
    const [{ wrapped_key: wrappedKey }] = await execSql(sigil, 'SELECT wrapped_key FROM organization_keys WHERE organization_id = ?', [sub.id]);
    const backup = (name: string) => {
      const out = join(freshDir(), name);
      const r = runSigil(['backup', '--data-dir', sigil.dataDir, '--out', out], sigil.env);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      return out;
    };
    const earlier = backup('before.backup');
    await sdkServerClient(sigil, sub.key, sub.id).deleteSubOrganization({ deleteWithoutExport: true });
    const later = backup('after.backup');

    // The wrapped key's bytes: in the earlier file, nowhere in the later one (not even a free page).
    expect(readFileSync(earlier).includes(Buffer.from(wrappedKey))).toBe(true);
    expect(readFileSync(later).includes(Buffer.from(wrappedKey))).toBe(false);

    // The earlier backup restores into a new data directory and exports the wallet.
    const target = freshDir();
    copyFileSync(join(sigil.dataDir, 'master.key'), join(target, 'master.key'));
    const restored = runSigil(['restore', '--data-dir', target, '--from', earlier], sigil.env);
    expect(restored.stderr).toBe('');
    expect(restored.status).toBe(0);
    const s = serve(target, sigil.env);
    cleanups.push(() => terminate(s.child));
    const again = { ...sigil, ...(await s.ready), dataDir: target };
    expect(await exportedAddress(again, sub.key, sub.id, sub.walletId)).toBe(sub.address);
  });

  it('a deployment sealed before migration 032 keeps signing and exporting after it; new secrets get the organization key', async () => {
    let sigil = await started();
    const sub = await subOrganization(sigil);
    await terminate(sigil.process);

    // Back to how secrets were sealed before migration 032: under the deployment's data key (v1),
    // bound to table, row and column, with no organization_keys table.
    const { dataKey, organizationKeys } = await keysInDatabase(sigil);
    const toV1 = (sealed: string, at: Location) => firstFormatSeal(dataKey, openWithAny(organizationKeys.values(), sealed, at)!, at);
    const [wallet] = await execSql(sigil, 'SELECT id, mnemonic FROM wallets WHERE organization_id = ?', [sub.id]);
    const [account] = await execSql(sigil, 'SELECT id, private_key FROM wallet_accounts WHERE organization_id = ?', [sub.id]);
    await execSql(sigil, 'UPDATE wallets SET mnemonic = ? WHERE id = ?', [toV1(wallet.mnemonic, { table: 'wallets', rowId: wallet.id, column: 'mnemonic' }), wallet.id]);
    await execSql(sigil, 'UPDATE wallet_accounts SET private_key = ? WHERE id = ?', [toV1(account.private_key, { table: 'wallet_accounts', rowId: account.id, column: 'private_key' }), account.id]);
    await execSql(sigil, 'DROP TABLE organization_keys');
    await execSql(sigil, `DELETE FROM kysely_migration WHERE name = '032_organization_keys'`);

    const restarted = serve(sigil.dataDir, sigil.env);
    sigil = { ...sigil, ...(await restarted.ready), process: restarted.child };
    cleanups.push(() => terminate(restarted.child));
    await expectSigns(sigil, sub.key, sub.id, sub.address);
    expect(await exportedAddress(sigil, sub.key, sub.id, sub.walletId)).toBe(sub.address);

    // A new wallet of the migrated organization is sealed with its own, new key.
    const made = await sdkServerClient(sigil, sub.key, sub.id).createWallet({ walletName: 'after', accounts: [ETH] });
    const [newKeyRow] = await execSql(sigil, 'SELECT key_id FROM organization_keys WHERE organization_id = ?', [sub.id]);
    const [newWallet] = await execSql(sigil, 'SELECT mnemonic FROM wallets WHERE id = ?', [made.walletId]);
    expect(newWallet.mnemonic).toMatch(new RegExp(`^v3:${sub.id}\\.${newKeyRow.key_id}:`));
    await expectSigns(sigil, sub.key, sub.id, made.addresses[0] as `0x${string}`);
  });
});

function freshDir() {
  const d = freshDeploymentEnv().dataDir;
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}
