// The operation registry: start-up checks hold, and every declared operation is exercised by at
// least one test (by its path or the official SDK method that calls it).
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from '../../src/operations/registry.js';
import { defineActivity, defineQuery } from '../../src/operations/define.js';

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
