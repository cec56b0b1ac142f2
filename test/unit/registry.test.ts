// The operation registry: start-up checks hold (unique paths and types, every bearer secret the schema
// can carry declared secret), every operation's resource and action is the one
// docs/reference/policies.md "Keywords" gives (test/vectors/activity-resources.json, with the deliberate
// departures listed there), the activities a parent organization may submit for a sub-organization are
// the list of docs/compatibility.md "Authentication activities a parent organization runs for its
// sub-organizations", and every declared operation is exercised by at least one test (by its path or the
// official SDK method that calls it).
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from '../../src/operations/registry.js';
import { defineActivity, defineQuery } from '../../src/operations/define.js';
import { redactSecrets, secretFieldsOf } from '../../src/operations/secret-fields.js';
import { activityKind } from '../../src/domain/governance/policy-context.js';
import table from '../vectors/activity-resources.json';

function testSources(dir: string): string {
  let out = '';
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out += testSources(p);
    else if (name.endsWith('.test.ts')) out += readFileSync(p, 'utf8');
  }
  return out;
}

const camel = (path: string) => path.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

// The official SDK names some methods differently from the path segment.
const SDK_METHOD: Record<string, string> = {
  whoami: 'getWhoami',
  list_users: 'getUsers',
  list_activities: 'getActivities',
  list_private_keys: 'getPrivateKeys',
  list_wallets: 'getWallets',
  list_wallet_accounts: 'getWalletAccounts',
  list_app_proofs: 'getAppProofs',
  list_suborgs: 'getSubOrgIds',
  list_verified_suborgs: 'getVerifiedSubOrgIds',
};

describe('registry', () => {
  const registry = new Registry();

  it('has unique paths and type values, each bound to a schema', () => {
    expect(registry.activities.size).toBeGreaterThan(10);
    for (const [path, bindings] of registry.typeBindings) {
      for (const b of bindings.values()) {
        for (const d of [b.parametersDefinition].flat()) expect(d, `${path} ${b.type}`).toMatch(/^v1[A-Za-z0-9]+Intent(V\d+)?$/);
      }
    }
  });

  it('refuses duplicate paths, duplicate types and unknown result members at start-up', () => {
    const a = defineActivity({
      path: 'create_users',
      type: 'ACTIVITY_TYPE_CREATE_USERS_V4',
      result: 'createUsersResult',
      policy: { resource: 'USER', action: 'CREATE' },
      secretFields: ['users[].oauthProviders[].oidcToken'],
      execute: async () => ({}),
    });
    expect(() => new Registry([a, { ...a }])).toThrow(/duplicate activity path create_users/);
    expect(() => new Registry([a, { ...a, path: 'other' }])).toThrow(/declared by both/);
    expect(() => new Registry([{ ...a, result: 'noSuchResult' }])).toThrow(/unknown result member/);
    expect(() => new Registry([{ ...a, aliases: [{ type: 'ACTIVITY_TYPE_CREATE_USERS_V3', result: 'noSuchResult' }] }])).toThrow(/unknown result member/);
    expect(() => new Registry([{ ...a, aliases: [{ type: 'ACTIVITY_TYPE_CREATE_USERS_V3', parameters: ['v1NoSuchIntent'] }] }])).toThrow(/unknown parameter schema/);
    const q = defineQuery({ path: 'x', request: 'v1NoSuchRequest', execute: async () => ({}) });
    expect(() => new Registry([q])).toThrow(/unknown request schema/);
  });

  it('refuses to start when a secret parameter or result field is not declared secret', () => {
    const users = defineActivity({
      path: 'create_users',
      type: 'ACTIVITY_TYPE_CREATE_USERS_V4',
      result: 'createUsersResult',
      policy: { resource: 'USER', action: 'CREATE' },
      execute: async () => ({}),
    });
    expect(() => new Registry([users])).toThrow(/create_users \(ACTIVITY_TYPE_CREATE_USERS_V4\) has the parameter users\[\]\.oauthProviders\[\]\.oidcToken \(OIDC token/);
    const verify = defineActivity({
      path: 'verify_otp',
      type: 'ACTIVITY_TYPE_VERIFY_OTP_V2',
      result: 'verifyOtpResult',
      policy: { resource: 'OTP', action: 'VERIFY' },
      secretFields: ['encryptedOtpBundle'],
      execute: async () => ({}),
    });
    expect(() => new Registry([verify])).toThrow(/answers verificationToken \(verification token, in v1VerifyOtpResult\) that resultSecretFields does not declare/);
    expect(() => new Registry([{ ...verify, resultSecretFields: ['verificationToken'] }])).not.toThrow();
  });

  it('finds the bearer secrets of every schema the registry takes by field name and type', () => {
    expect(secretFieldsOf('v1CreateSubOrganizationIntentV8', 'parameters').map((f) => f.path).sort()).toEqual([
      'clientSignature.signature',
      'rootUsers[].oauthProviders[].oidcToken',
      'verificationToken',
    ]);
    expect(secretFieldsOf('v1OtpLoginIntentV2', 'parameters').map((f) => f.path).sort()).toEqual(['clientSignature.signature', 'verificationToken']);
    expect(secretFieldsOf('v1ImportWalletIntent', 'parameters').map((f) => f.path)).toEqual(['encryptedBundle']);
    // Bundles in results are sealed to the requester's own key or are public targets.
    expect(secretFieldsOf('v1ExportWalletResult', 'results')).toEqual([]);
    expect(secretFieldsOf('v1OtpAuthResult', 'results')).toEqual([]);
    // Ids, counts and flags named after secrets are not secrets.
    expect(secretFieldsOf('v1UpdateAuthProxyConfigIntent', 'parameters')).toEqual([]);
    // Every declared secret path exists in a schema the operation takes.
    for (const d of registry.activities.values()) {
      const found = new Set<string>();
      for (const b of registry.typeBindings.get(d.path)!.values()) {
        for (const def of [b.parametersDefinition].flat()) for (const f of secretFieldsOf(def, 'parameters')) found.add(f.path);
      }
      for (const declared of d.secretFields ?? []) expect(found.has(declared), `${d.path} declares ${declared}`).toBe(true);
    }
  });

  it('redacts nested secret paths in lists and leaves everything else as it was', () => {
    const params = {
      subOrganizationName: 's',
      verificationToken: 'tok',
      rootUsers: [{ userName: 'a', oauthProviders: [{ providerName: 'g', oidcToken: 'jwt' }, { providerName: 'h', oidcClaims: {} }] }],
    };
    const copy = structuredClone(params);
    expect(redactSecrets(params, ['verificationToken', 'clientSignature.signature', 'rootUsers[].oauthProviders[].oidcToken'])).toEqual({
      subOrganizationName: 's',
      verificationToken: '<redacted>',
      rootUsers: [{ userName: 'a', oauthProviders: [{ providerName: 'g', oidcToken: '<redacted>' }, { providerName: 'h', oidcClaims: {} }] }],
    });
    expect(params).toEqual(copy);
  });

  it('every activity type has the resource and action of the documented table (or a listed deliberate one)', () => {
    const documented = table.documented as Record<string, { resource: string; action: string }>;
    const deliberate = table.deliberate as Record<string, { resource: string; action: string; why: string }>;
    const differences: string[] = [];
    let checked = 0;
    for (const [type, { decl }] of registry.byType) {
      const kind = activityKind(type);
      const expected = documented[kind] ?? deliberate[kind];
      const actual = `${decl.policy.resource}/${decl.policy.action}`;
      if (!expected) differences.push(`${type}: ${actual}, but the documented table has no ${kind} and it is not listed as deliberate`);
      else if (`${expected.resource}/${expected.action}` !== actual) differences.push(`${type}: ${actual}, the documented table says ${expected.resource}/${expected.action}`);
      checked += 1;
    }
    expect(differences).toEqual([]);
    expect(checked).toBe(registry.byType.size);
    // The deliberate list names only kinds the documented table lacks, and each is still served.
    const kinds = new Set([...registry.byType.keys()].map(activityKind));
    for (const kind of Object.keys(deliberate)) {
      expect(documented[kind], kind).toBeUndefined();
      expect(kinds.has(kind), kind).toBe(true);
    }
  });

  it('a parent organization submits for its sub-organizations exactly the authentication activities docs/compatibility.md lists', () => {
    const paths = [...registry.activities.values()].filter((d) => d.parentOrganizationMaySubmit).map((d) => d.path).sort();
    expect(paths).toEqual([
      'create_oauth_providers',
      'email_auth',
      'init_otp',
      'init_otp_auth',
      'init_user_email_recovery',
      'oauth',
      'oauth_login',
      'otp_auth',
      'otp_login',
      'verify_otp',
    ]);
    // Only social linking carries a condition of its own.
    expect(typeof registry.activities.get('create_oauth_providers')!.parentOrganizationMaySubmit).toBe('function');
  });

  it('every operation has a test', () => {
    const sources = testSources(join(__dirname, '..'));
    const untested = registry
      .all()
      .map((d) => d.path)
      .filter((path) => {
        const method = SDK_METHOD[path] ?? camel(path);
        return !sources.includes(`'${path}'`) && !sources.includes(`/${path}`) && !new RegExp(`\\.${method}\\(`).test(sources);
      });
    expect(untested).toEqual([]);
  });
});
