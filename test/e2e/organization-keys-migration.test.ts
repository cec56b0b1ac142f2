// In-place migration to per-organization keys (docs/operator-guide.md "Custody"),
// and every kind of an organization's secret under its key (docs/secrets.md "At rest"), through
// @turnkey/sdk-server, @turnkey/http and @turnkey/crypto. A sub-organization holds one secret of each
// kind: wallet and account keys, a private key, an imported secret, import targets, an OTP target, an
// OAuth2 client secret, and a waiting activity's parameters (an import bundle). Its rows are put back
// as a deployment older than per-organization keys sealed them (under the deployment's key); a
// restarted Sigil re-seals them in the background under the organization's key (on PostgreSQL, two
// processes at once, each secret written once). Read raw, from the
// database: before the deletion each row opens with a key the database holds; after it, no row
// (as a backup would keep it) opens with any key a copy of the database holds, while the same rows
// as they were before re-sealing still would: what the migration takes away.
// Runs on SQLite, and on PostgreSQL with SIGIL_TEST_DATABASE_URL.
import { afterEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { encryptOauth2ClientSecret, encryptSecretToBundle, encryptWalletToBundle } from '@turnkey/crypto';
import { generateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { mnemonicToAccount } from 'viem/accounts';
import { runSigil, serve, startSigil, terminate, testDatabaseUrl, type SigilInstance } from '../helpers/sigil.js';
import { httpClient, newKey, sdkServerClient } from '../helpers/clients.js';
import { execSql } from '../helpers/db-snapshot.js';
import { smtpEnv, startInbox } from '../helpers/mail.js';
import { firstFormatSeal, keysInDatabase, openWithAny, rawSecretsOf, type RawSecret } from '../helpers/sealed-rows.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;
const SUITE = 'TRANSPORT_ENCRYPTION_SUITE_ENCLAVE_ENCRYPT_V1' as const;
const now = () => String(Date.now());

/** Every secret kind of a sub-organization, one of each; answers its id and its two root users. */
async function subOrganizationWithEverySecret(sigil: SigilInstance) {
  const a = newKey();
  const b = newKey();
  const made = await sdkServerClient(sigil).createSubOrganization({
    subOrganizationName: `end user ${randomBytes(3).toString('hex')}`,
    rootUsers: [
      { userName: 'alice', userEmail: 'alice@example.com', apiKeys: [{ apiKeyName: 'a', publicKey: a.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] },
      { userName: 'bob', apiKeys: [{ apiKeyName: 'b', publicKey: b.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] },
    ],
    rootQuorumThreshold: 1,
    wallet: { walletName: 'default', accounts: [ETH] },
  });
  const id = made.subOrganizationId;
  const api = sdkServerClient(sigil, a, id);
  const signer = sigil.root.signerPublicKey;
  const { users } = await api.getUsers({});
  const alice = users.find((u) => u.userName === 'alice')!.userId;
  const bob = users.find((u) => u.userName === 'bob')!.userId;

  await api.createPrivateKeys({ privateKeys: [{ privateKeyName: 'pk', curve: 'CURVE_SECP256K1', privateKeyTags: [], addressFormats: ['ADDRESS_FORMAT_ETHEREUM'] }] });
  // An imported secret (its spent target stays) and an unused secret target.
  const init = await httpClient(sigil, a).initImportSecrets({ type: 'ACTIVITY_TYPE_INIT_IMPORT_SECRETS', timestampMs: now(), organizationId: id, parameters: { encryptionSuite: SUITE, numSecrets: 2 } });
  const [target] = (init.activity.result as any).initImportSecretsResult.enclaveTargetMessages;
  const { secretPayload, targetPublicKey } = await encryptSecretToBundle({ plaintext: 'exchange api token', ingressTargetBundle: target, organizationId: id, dangerouslyOverrideSignerPublicKey: signer });
  await api.importSecrets({ secrets: [{ name: 'token', secretPayload, targetPublicKey, encryptionSuite: SUITE }] });
  await sdkServerClient(sigil, sigil.root, id).initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: 'alice@example.com', appName: 'Sigil Test' } as never);
  await api.createOauth2Credential({ provider: 'OAUTH2_PROVIDER_X', clientId: 'client', encryptedClientSecret: await encryptOauth2ClientSecret('client secret', signer) });
  // A wallet import waiting for the second root user: its parameters hold the encrypted bundle.
  const { importBundle } = await api.initImportWallet({ userId: alice });
  const mnemonic = generateMnemonic(wordlist, 256);
  const encryptedBundle = await encryptWalletToBundle({ mnemonic, importBundle, userId: alice, organizationId: id, dangerouslyOverrideSignerPublicKey: signer });
  await api.updateRootQuorum({ threshold: 2, userIds: [alice, bob] });
  const waiting = await httpClient(sigil, a).importWallet({
    type: 'ACTIVITY_TYPE_IMPORT_WALLET',
    timestampMs: now(),
    organizationId: id,
    parameters: { userId: alice, walletName: 'imported', encryptedBundle, accounts: [ETH] },
  });
  expect(waiting.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
  return { id, a, b, waiting: waiting.activity.fingerprint, mnemonic };
}

/** Submits as `a` and approves as `b` (the sub-organization's root quorum of two). */
async function approve(sigil: SigilInstance, b: ReturnType<typeof newKey>, orgId: string, fingerprint: string) {
  const r = await httpClient(sigil, b).approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: now(), organizationId: orgId, parameters: { fingerprint } });
  expect(r.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  return r.activity;
}

const kinds = (rows: RawSecret[]) => [...new Set(rows.map((r) => `${r.at.table}.${r.at.column}`))].sort();
const EVERY_KIND = [
  'activities.pending_parameters',
  'import_bundles.target_private_key',
  'oauth2_credentials.client_secret',
  'otps.target_private_key',
  'private_keys.private_key',
  'secrets.value',
  'wallet_accounts.private_key',
  'wallets.mnemonic',
];

async function allKeys(sigil: SigilInstance) {
  const { dataKey, organizationKeys } = await keysInDatabase(sigil);
  return [dataKey, ...organizationKeys.values()];
}

describe('existing deployments migrate to per-organization keys in place', () => {
  it('secrets sealed under the deployment key are re-sealed under the organization key; after deletion no raw row of it opens', async () => {
    const mail = await startInbox();
    cleanups.push(() => mail.close());
    const started = await startSigil(smtpEnv(mail), { process: true });
    cleanups.push(() => started.stop());
    let sigil = started;
    const sub = await subOrganizationWithEverySecret(sigil);
    // The auth proxy's key belongs to the parent organization and is sealed with its key.
    const proxy = runSigil(['proxy-config', 'create', '--data-dir', sigil.dataDir, '--json', '--app-name', 'Migration Test'], sigil.env);
    expect(proxy.status).toBe(0);

    // As stored now: every kind, each under the sub-organization's key in the current format.
    const current = await rawSecretsOf(sigil, sub.id);
    expect(kinds(current)).toEqual(EVERY_KIND);
    const [{ key_id: keyId }] = await execSql(sigil, 'SELECT key_id FROM organization_keys WHERE organization_id = ?', [sub.id]);
    for (const r of current) expect(r.sealed, `${r.at.table}.${r.at.column}`).toMatch(new RegExp(`^v3:${sub.id}\\.${keyId}:[A-Za-z0-9+/=]+$`));
    const parentRows = await rawSecretsOf(sigil, sigil.root.organizationId);
    expect(kinds(parentRows)).toContain('auth_proxy_configs.private_key');
    for (const r of parentRows) expect(r.sealed).toMatch(new RegExp(`^v3:${sigil.root.organizationId}\\.[0-9a-f]{24}:`));

    // Back to a deployment older than per-organization keys: the same secrets under the deployment's
    // key in the first format, and no key for the sub-organization.
    await terminate(sigil.process);
    const keys = await keysInDatabase(sigil);
    for (const r of [...current, ...parentRows]) {
      const plaintext = openWithAny([...keys.organizationKeys.values()], r.sealed, r.at)!;
      expect(plaintext, `${r.at.table}.${r.at.column}`).toBeDefined();
      await execSql(sigil, `UPDATE ${r.at.table} SET ${r.at.column} = ? WHERE id = ?`, [firstFormatSeal(keys.dataKey, plaintext, r.at), r.at.rowId]);
    }
    await execSql(sigil, 'DELETE FROM organization_keys');
    const old = await rawSecretsOf(sigil, sub.id);
    for (const r of old) expect(r.sealed).toMatch(/^v1:/);

    // Restarted, Sigil re-seals them in the background; wait (bounded) until none is left. On
    // PostgreSQL two processes start at once and walk the same rows.
    // Logged at info: the walk's outcome, read below.
    const env = { ...sigil.env, SIGIL_LOG_LEVEL: 'info' };
    const restarts = [serve(sigil.dataDir, env), ...(testDatabaseUrl() ? [serve(sigil.dataDir, env)] : [])];
    for (const r of restarts) cleanups.push(() => terminate(r.child));
    const [restarted] = restarts;
    const ready = await Promise.all(restarts.map((r) => r.ready));
    sigil = { ...sigil, ...ready[0], process: restarted.child };
    let migrated: RawSecret[] = [];
    for (let i = 0; i < 600; i++) {
      migrated = [...(await rawSecretsOf(sigil, sub.id)), ...(await rawSecretsOf(sigil, sigil.root.organizationId))];
      if (migrated.every((r) => r.sealed.startsWith('v3:'))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const [{ key_id: newKeyId }] = await execSql(sigil, 'SELECT key_id FROM organization_keys WHERE organization_id = ?', [sub.id]);
    // Each secret was re-sealed once, by one process or the other, and none was left unopened.
    for (const r of restarts) await terminate(r.child);
    const outcomes = restarts.flatMap((r) =>
      r.stderr().split('\n').filter((l) => l.includes('"reseal"')).map((l) => JSON.parse(l).reseal as { resealed: number; unopenable: number }),
    );
    expect(outcomes.reduce((n, o) => n + o.resealed, 0)).toBe(current.length + parentRows.length);
    expect(outcomes.every((o) => o.unopenable === 0)).toBe(true);
    const again = serve(sigil.dataDir, sigil.env);
    cleanups.push(() => terminate(again.child));
    sigil = { ...sigil, ...(await again.ready), process: again.child };
    const subRows = migrated.filter((r) => r.organizationId === sub.id);
    expect(kinds(subRows)).toEqual(EVERY_KIND);
    for (const r of subRows) expect(r.sealed, `${r.at.table}.${r.at.column}`).toMatch(new RegExp(`^v3:${sub.id}\\.${newKeyId}:`));
    for (const r of migrated.filter((r) => r.organizationId !== sub.id)) expect(r.sealed).toMatch(new RegExp(`^v3:${sigil.root.organizationId}\\.`));

    // Before the deletion, every raw row opens with a key the database holds.
    const before = await allKeys(sigil);
    for (const r of subRows) expect(openWithAny(before, r.sealed, r.at), `${r.at.table}.${r.at.column}`).toBeDefined();

    // Served through the re-sealed rows: the waiting import completes with the second vote.
    await approve(sigil, sub.b, sub.id, sub.waiting);
    const wallets = (await sdkServerClient(sigil, sub.a, sub.id).getWallets({})).wallets;
    const imported = wallets.find((w) => w.walletName === 'imported')!;
    const [account] = (await sdkServerClient(sigil, sub.a, sub.id).getWalletAccounts({ walletId: imported.walletId })).accounts;
    expect(account.address).toBe(mnemonicToAccount(sub.mnemonic).address);

    // Deleted (back to a quorum of one first: the quorum of two approves that), then a copy of the
    // database: none of the rows opens with any key it holds, in either format; the same secrets as
    // they were before re-sealing still would.
    const { users } = await sdkServerClient(sigil, sub.a, sub.id).getUsers({});
    const quorum = await httpClient(sigil, sub.a).updateRootQuorum({
      type: 'ACTIVITY_TYPE_UPDATE_ROOT_QUORUM',
      timestampMs: now(),
      organizationId: sub.id,
      parameters: { threshold: 1, userIds: users.map((u) => u.userId) },
    });
    await approve(sigil, sub.b, sub.id, quorum.activity.fingerprint);
    await sdkServerClient(sigil, sub.a, sub.id).deleteSubOrganization({ deleteWithoutExport: true });
    expect(await rawSecretsOf(sigil, sub.id)).toEqual([]);
    expect(await execSql(sigil, 'SELECT * FROM organization_keys WHERE organization_id = ?', [sub.id])).toEqual([]);
    const after = await allKeys(sigil);
    for (const r of subRows) expect(openWithAny(after, r.sealed, r.at), `${r.at.table}.${r.at.column}`).toBeUndefined();
    for (const r of old) expect(openWithAny(after, r.sealed, r.at), `${r.at.table}.${r.at.column}`).toBeDefined();
  });
});
