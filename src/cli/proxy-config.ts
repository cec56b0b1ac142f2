// `sigil proxy-config create|list`: the operator makes the configurations the
// auth proxy acts on (docs/reference/auth-proxy.md) directly in the deployment's store, as `sigil init`
// makes the root organization: this is where the proxy's own user, API key and policy come from
// (src/domain/identity/auth-proxy-configs.ts). It needs the master key to seal the proxy key.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import type { AuthMethod } from '../domain/identity/auth-methods.js';
import { checkSettings, createAuthProxyConfig, settingsOf, type AuthProxySettings } from '../domain/identity/auth-proxy-configs.js';
import { loadDeployment } from '../domain/governance/deployment.js';
import { withAutomaticSeal } from './seal.js';
import { requireOrganization } from '../domain/governance/organizations.js';
import { SigilError } from '../errors/errors.js';
import { Store } from '../store/index.js';
import { PROXY_CONFIG_HELP } from './proxy-config-help.js';


function bool(name: string, v: string): boolean {
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new SigilError('REQUEST_INVALID', `--${name} must be true or false, got "${v}"`);
}

function int(name: string, v: string): number {
  if (!/^\d+$/.test(v)) throw new SigilError('REQUEST_INVALID', `--${name} must be a whole number, got "${v}"`);
  return Number(v);
}

const list = (v: string) => v.split(',').map((s) => s.trim()).filter((s) => s !== '');

export async function proxyConfigCommand(args: string[], print: (text: string) => void): Promise<void> {
  const [sub, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: {
      'data-dir': { type: 'string' },
      'organization-id': { type: 'string' },
      'allowed-origins': { type: 'string' },
      methods: { type: 'string' },
      'session-seconds': { type: 'string' },
      'otp-length': { type: 'string' },
      'otp-alphanumeric': { type: 'string' },
      'otp-seconds': { type: 'string' },
      'token-seconds': { type: 'string' },
      'app-name': { type: 'string' },
      'require-token-for-account': { type: 'boolean' },
      'oauth-client-id': { type: 'string', multiple: true },
      'oauth-redirect-url': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (sub !== 'create' && sub !== 'list') {
    throw new SigilError('REQUEST_INVALID', `unknown proxy-config command "${sub ?? ''}": expected create or list\n\n${PROXY_CONFIG_HELP.usage}`);
  }
  const config = loadConfig({ 'data-dir': values['data-dir'] }, process.env);
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    if (sub === 'list') {
      const rows = await store.repos.authProxyConfigs.list();
      const out = rows.map((r) => ({ configId: r.id, organizationId: r.organization_id, enabled: r.enabled === 1, settings: settingsOf(r) }));
      if (values.json) print(JSON.stringify(out, null, 2));
      else if (out.length === 0) print('no auth proxy configurations: create one with "sigil proxy-config create"');
      else for (const c of out) print(`${c.configId}  organization ${c.organizationId}  methods ${c.settings.allowedAuthMethods.join(',')}  origins ${c.settings.allowedOrigins.join(',')}`);
      return;
    }
    const input: Partial<AuthProxySettings> = {};
    if (values['allowed-origins'] !== undefined) input.allowedOrigins = list(values['allowed-origins']);
    if (values.methods !== undefined) input.allowedAuthMethods = list(values.methods) as AuthMethod[];
    if (values['session-seconds'] !== undefined) input.sessionExpirationSeconds = int('session-seconds', values['session-seconds']);
    if (values['otp-length'] !== undefined) input.otpLength = int('otp-length', values['otp-length']);
    if (values['otp-alphanumeric'] !== undefined) input.otpAlphanumeric = bool('otp-alphanumeric', values['otp-alphanumeric']);
    if (values['otp-seconds'] !== undefined) input.otpExpirationSeconds = int('otp-seconds', values['otp-seconds']);
    if (values['token-seconds'] !== undefined) input.verificationTokenExpirationSeconds = int('token-seconds', values['token-seconds']);
    if (values['app-name'] !== undefined) input.appName = values['app-name'];
    if (values['require-token-for-account']) input.verificationTokenRequiredForGetAccountPii = true;
    const clientIds: Record<string, string> = {};
    for (const pair of values['oauth-client-id'] ?? []) {
      const [provider, id] = pair.split('=', 2);
      if (!provider || !id) throw new SigilError('REQUEST_INVALID', `--oauth-client-id must be PROVIDER=CLIENT_ID, got "${pair}"`);
      clientIds[provider] = id;
    }
    input.walletKit = { oauthClientIds: clientIds, oauthRedirectUrl: values['oauth-redirect-url'] ?? '' };
    const settings = checkSettings(input);

    const deployment = await withAutomaticSeal(config, (seal) => loadDeployment(store.repos, seal));
    const organizationId = values['organization-id'] ?? deployment.rootOrganizationId;
    const row = await store.transaction(async (repos) => {
      const org = await requireOrganization(repos, organizationId);
      return createAuthProxyConfig(repos, deployment.barrier, org, settings, Date.now());
    });
    if (values.json) print(JSON.stringify({ configId: row.id, organizationId: row.organization_id, proxyUserId: row.user_id, settings }, null, 2));
    else print(`auth proxy config ${row.id} created for organization ${row.organization_id}\nsend it as X-Auth-Proxy-Config-ID to the auth proxy`);
  } finally {
    await store.close();
  }
}
