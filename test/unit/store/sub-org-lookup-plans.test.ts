// The lookups of an end user's sub-organization (list_suborgs / list_verified_suborgs filters, the auth
// proxy's account lookup; src/store/repositories/organizations.ts, migration 030) are one index read
// whatever the number of sub-organizations: with a few thousand of them on the store under test
// (embedded SQLite, or PostgreSQL when SIGIL_TEST_DATABASE_URL is set), each filter's plan starts from
// the index on the value it names and reaches the organization by primary key, never scanning the
// parent's children; and the answers are the right sub-organizations, in creation order. The plans are
// judged on the statistics the database happens to hold right after the rows went in (no ANALYZE: what a
// deployment in a signup burst runs on, where the planner once chose to walk every child) and again on
// fresh ones.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../../src/store/index.js';
import { dropSchema, freshDeploymentEnv } from '../../helpers/sigil.js';

const N = 3000;
const T0 = 1_700_000_000_000;
let store: Store;
let databaseUrl: string | undefined;
let dataDir: string;
const parentId = randomUUID();
const subs: string[] = [];

const email = (i: number) => `user${i}@example.com`;
const phone = (i: number) => `+1555${String(i).padStart(7, '0')}`;
const address = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
const publicKey = (i: number) => `02${i.toString(16).padStart(64, '0')}`;
const credentialId = (i: number) => `cred-${i}`;

beforeAll(async () => {
  const fresh = freshDeploymentEnv();
  databaseUrl = fresh.databaseUrl;
  dataDir = fresh.dataDir;
  store = await Store.open({ dataDir, databaseUrl });
  await store.transaction(async (r) => {
    await r.organizations.insert({ id: parentId, name: 'parent', parent_organization_id: null, root_quorum_threshold: 1, created_at: T0, updated_at: T0 });
  });
  for (let start = 0; start < N; start += 500) {
    await store.transaction(async (r) => {
      for (let i = start; i < start + 500; i++) {
        const org = randomUUID();
        const user = randomUUID();
        const wallet = randomUUID();
        const at = T0 + i;
        subs.push(org);
        await r.organizations.insert({ id: org, name: `end user ${i}`, parent_organization_id: parentId, root_quorum_threshold: 1, created_at: at, updated_at: at });
        await r.users.insert({
          id: user,
          organization_id: org,
          user_name: `user ${i}`,
          user_email: email(i),
          user_phone_number: i % 2 ? phone(i) : null,
          email_verified_at: i % 3 ? at : null,
          phone_number_verified_at: null,
          created_at: at,
          updated_at: at,
        });
        await r.apiKeys.insert([
          { id: randomUUID(), organization_id: org, user_id: user, api_key_name: 'k', public_key: publicKey(i), curve_type: 'API_KEY_CURVE_P256', credential_type: 'CREDENTIAL_TYPE_API_KEY_P256', expiration_seconds: null, expires_at: null, created_at: at, updated_at: at, session_profile_id: null },
        ]);
        await r.authenticators.insert([
          { id: randomUUID(), organization_id: org, user_id: user, name: 'passkey', credential_id: credentialId(i), public_key: 'x', credential_public_key: publicKey(i), algorithm: -7, sign_count: 0, transports: '[]', attestation_type: 'none', aaguid: '00000000-0000-0000-0000-000000000000', model: '', created_at: at, updated_at: at },
        ]);
        await r.oauthProviders.insert([
          { id: randomUUID(), organization_id: org, user_id: user, provider_name: 'google', issuer: 'https://accounts.example', audience: 'app', subject: `sub-${i}`, created_at: at, updated_at: at },
        ]);
        await r.wallets.insertWithAccounts(
          { id: wallet, organization_id: org, name: 'w', mnemonic: 'sealed', exported: 0, imported: 0, created_at: at, updated_at: at },
          [
            { id: randomUUID(), organization_id: org, wallet_id: wallet, curve: 'CURVE_SECP256K1', path_format: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", path_key: "m/44'/60'/0'/0/0", address_format: 'ADDRESS_FORMAT_ETHEREUM', address: address(i), public_key: publicKey(i), private_key: 'sealed', exported: 0, name: null, created_at: at, updated_at: at },
          ],
        );
      }
    });
  }
}, 120_000);

afterAll(async () => {
  await store?.close();
  if (databaseUrl) await dropSchema(databaseUrl);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const i = 1777;
const lookups = [
  { filter: { type: 'EMAIL', value: email(i) }, index: 'users_email', expected: [i] },
  { filter: { type: 'EMAIL', value: email(i), verified: true }, index: 'users_email', expected: [i] },
  { filter: { type: 'PHONE_NUMBER', value: phone(i) }, index: 'users_phone_number', expected: [i] },
  { filter: { type: 'USERNAME', value: `user ${i}` }, index: 'users_name', expected: [i] },
  { filter: { type: 'NAME', value: `end user ${i}` }, index: 'organizations_name', expected: [i] },
  { filter: { type: 'PUBLIC_KEY', value: publicKey(i) }, index: 'api_keys_public_key', expected: [i] },
  { filter: { type: 'CREDENTIAL_ID', value: credentialId(i) }, index: 'authenticators_credential_id', expected: [i] },
  { filter: { type: 'WALLET_ACCOUNT_ADDRESS', value: address(i) }, index: 'wallet_accounts_address', expected: [i] },
  { filter: { type: 'OIDC_TOKEN', identity: { issuer: 'https://accounts.example', audience: 'app', subject: `sub-${i}` } }, index: 'oauth_providers_identity', expected: [i] },
];

describe(`sub-organization lookups among ${N} sub-organizations`, () => {
  for (const { filter, index, expected } of lookups) {
    it(`${filter.type}${filter.verified ? ' (verified)' : ''}: one read of ${index}, then the organization by key`, async () => {
      expect(await store.repos.organizations.children(parentId, filter, { limit: 10 })).toEqual(expected.map((k) => subs[k]));
      for (const analyze of [false, true]) {
        const plan = await store.repos.organizations.childrenPlan(parentId, filter, 10, analyze);
        // Printed so a reader of the test output sees the plan the assertion judged.
        console.log(`${filter.type}${filter.verified ? ' verified' : ''}${analyze ? ', fresh statistics' : ', statistics as they are'}:\n${plan}`);
        expect(plan).toContain(index);
        // No walk over the parent's children or a table: the organization row is read by its key.
        expect(plan).not.toMatch(/organizations_parent_created|Seq Scan|SCAN organizations|SCAN users|SCAN wallet_accounts|SCAN api_keys/);
        if (filter.type !== 'NAME') expect(plan).toMatch(/organizations_pkey|sqlite_autoindex_organizations_1/);
      }
    });
  }

  it('an email that is not verified is not found by list_verified_suborgs, and a missing value finds nothing', async () => {
    expect(await store.repos.organizations.children(parentId, { type: 'EMAIL', value: email(3), verified: true }, { limit: 10 })).toEqual([]);
    expect(await store.repos.organizations.children(parentId, { type: 'EMAIL', value: email(3) }, { limit: 10 })).toEqual([subs[3]]);
    expect(await store.repos.organizations.children(parentId, { type: 'WALLET_ACCOUNT_ADDRESS', value: address(N + 1) }, { limit: 10 })).toEqual([]);
  });

  it('an unfiltered page reads the parent index in order from the cursor, without sorting every child', async () => {
    expect(await store.repos.organizations.children(parentId, {}, { limit: 3, after: subs[100] })).toEqual(subs.slice(101, 104));
    const plan = await store.repos.organizations.childrenPlan(parentId, {});
    console.log(`unfiltered:\n${plan}`);
    expect(plan).toContain('organizations_parent_created');
    expect(plan).not.toMatch(/Sort|TEMP B-TREE|Seq Scan/);
  });
});
