// The auth proxy server (docs/reference/auth-proxy.md; docs/reference/auth-proxy.md; auth_proxy
// swagger): POST /v1/<operation> with `X-Auth-Proxy-Config-ID` and no stamp, so a browser can run the
// login flows without a backend of its own. Each endpoint is a translation to the public API: the
// proxy stamps an ordinary request with its configuration's own API key (src/domain/identity/auth-proxy-configs.ts)
// and hands it to the one pipeline, which authenticates, applies policies and records it like any
// other; only `account` and the wallet kit endpoints are answered from reads.
//
// Checks of its own: the configuration exists and is enabled; a browser's Origin is one the
// configuration allows (exact match or `*`); the login method an endpoint serves is enabled; tokens a
// caller presents without a stamp (OIDC tokens at signup and account lookup, verification tokens at
// account lookup) are verified before anything is looked up with them. Requests through the proxy are
// exempt from IP allowlists (docs/reference/organizations.md).
import type { Logger } from 'pino';
import type { FastifyRequest } from 'fastify';
import { P256Signer } from '../crypto/p256.js';
import type { Barrier } from '../barrier/barrier.js';
import { OAUTH_METHODS, type AuthMethod } from '../domain/identity/auth-methods.js';
import { proxyPrivateKey, requireAuthProxyConfig, settingsOf, type AuthProxySettings } from '../domain/identity/auth-proxy-configs.js';
import type { Services } from '../domain/context.js';
import { readVerificationToken } from '../domain/identity/verification-tokens.js';
import { contactKindOf, sameContact, subOrganizationsTrustingContact } from '../domain/identity/verified-contacts.js';
import { SigilError, invalid } from '../errors/errors.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import { parseBody } from '../pipeline/envelope.js';
import type { AuthProxyConfigRow, Repositories } from '../store/index.js';
import { toSigilError } from './errors.js';
import { baseServer } from './public-api.js';
import { requireJsonBody, type TransportLimits } from './transport.js';

type Json = Record<string, any>;

/** A configuration as one request sees it, with the means to call the public API as its proxy user. */
interface ProxyCall {
  config: AuthProxyConfigRow;
  settings: AuthProxySettings;
  body: Json;
  /** `generateAppProofs`: the activity carries app proofs (docs/app-proofs.md "App proofs"), as signup's answer does. */
  submit(operation: string, type: string, parameters: Json, generateAppProofs?: boolean): Promise<Json>;
  query(operation: string, body: Json): Promise<Json>;
  /** Takes a token of the client address's signup bucket (429 when it is empty). */
  takeSignup(): Promise<void>;
}

interface Endpoint {
  /** Login methods of which at least one must be enabled; none: always available. */
  methods?: (body: Json) => AuthMethod[];
  handle(call: ProxyCall, services: Services, repos: Repositories): Promise<Json>;
}

const disallowed = (what: string) => new SigilError('REQUEST_NOT_AUTHORIZED', `${what} disallowed: the auth proxy configuration does not enable it`);

const otpMethod = (body: Json): AuthMethod[] => (body.otpType === 'OTP_TYPE_SMS' ? ['sms'] : body.otpType === 'OTP_TYPE_EMAIL' ? ['email'] : ['email', 'sms']);

function need(body: Json, ...fields: string[]): void {
  for (const f of fields) {
    if (body[f] === undefined || body[f] === null || body[f] === '') throw invalid(`bad request body: missing parameter: ${f}`);
  }
}

const optional = <T>(v: T | undefined | null) => (v === undefined || v === null || v === '' ? undefined : v);

function initOtp(call: ProxyCall) {
  const { body, settings } = call;
  need(body, 'otpType', 'contact');
  return call.submit('init_otp', 'ACTIVITY_TYPE_INIT_OTP_V3', {
    otpType: body.otpType,
    contact: body.contact,
    appName: settings.appName,
    otpLength: settings.otpLength,
    alphanumeric: settings.otpAlphanumeric,
    expirationSeconds: String(settings.otpExpirationSeconds),
    ...(body.emailCustomization ? { emailCustomization: body.emailCustomization } : {}),
  });
}

async function otpLogin(call: ProxyCall, requireSignature: boolean) {
  const { body, settings } = call;
  need(body, 'verificationToken', 'publicKey', ...(requireSignature ? ['clientSignature'] : []));
  const parameters = {
    verificationToken: body.verificationToken,
    publicKey: body.publicKey,
    ...(body.clientSignature ? { clientSignature: body.clientSignature } : {}),
    expirationSeconds: String(settings.sessionExpirationSeconds),
    invalidateExisting: body.invalidateExisting === true,
  };
  const r = await call.submit('otp_login', body.clientSignature ? 'ACTIVITY_TYPE_OTP_LOGIN_V2' : 'ACTIVITY_TYPE_OTP_LOGIN', parameters);
  return { session: r.session };
}

/**
 * The login methods a signup body uses, one group per kind of credential: a verified contact,
 * passkeys, OAuth identities, wallet keys. A P-256 API key alone is no login method (it is the
 * session key @turnkey/core adds beside one).
 */
function signupMethods(body: Json): AuthMethod[][] {
  // Read before the body's types are checked (signup does that), so a wrong type counts as absent.
  const list = (v: unknown): Json[] => (Array.isArray(v) ? v : []);
  const groups: AuthMethod[][] = [];
  if (list(body.oauthProviders).length > 0) groups.push([...OAUTH_METHODS]);
  if (list(body.authenticators).length > 0) groups.push(['passkey']);
  if (body.verificationToken) groups.push(['email', 'sms']);
  if (list(body.apiKeys).some((k) => k?.curveType !== 'API_KEY_CURVE_P256')) groups.push(['wallet']);
  return groups;
}

/**
 * A signup must use at least one login method and only methods the configuration enables: otherwise
 * anyone could make themselves an organization with a root key of their own.
 */
function checkSignupMethods(body: Json, settings: AuthProxySettings): void {
  const groups = signupMethods(body);
  if (groups.length === 0) {
    throw new SigilError(
      'REQUEST_NOT_AUTHORIZED',
      `signup disallowed: it uses none of the login methods the auth proxy configuration enables (${settings.allowedAuthMethods.join(', ') || 'none'}); a P-256 API key alone is not a login method`,
    );
  }
  for (const group of groups) {
    if (!group.some((m) => settings.allowedAuthMethods.includes(m))) throw disallowed(group.some((m) => OAUTH_METHODS.includes(m)) ? 'OAUTH' : group.join('/').toUpperCase());
  }
}

async function signup(call: ProxyCall, services: Services) {
  const { body } = call;
  for (const f of ['apiKeys', 'authenticators', 'oauthProviders']) {
    if (body[f] !== undefined && !Array.isArray(body[f])) throw invalid(`bad request body: ${f} must be a list`);
  }
  const email = optional<string>(body.userEmail);
  const phone = optional<string>(body.userPhoneNumber);
  // A contact is only taken with proof: otherwise anyone could attach someone else's email to an
  // account of theirs and receive that person's OTP logins.
  if ((email || phone) && !body.verificationToken) {
    throw invalid('bad request body: userEmail and userPhoneNumber need the verificationToken of an OTP sent to them');
  }
  checkSignupMethods(body, call.settings);
  // Counted per client address before anything is verified or created (docs/auth-proxy.md "The auth proxy").
  await call.takeSignup();
  // No stamp vouches for the OIDC tokens here, so each must verify before its identity is registered.
  for (const [i, p] of (body.oauthProviders ?? []).entries()) {
    if (p?.oidcToken) await services.oidc.verify(p.oidcToken, {});
    else throw invalid(`bad request body: oauthProviders[${i}].oidcToken is required through the auth proxy`);
  }
  const name = optional<string>(body.userName) ?? email ?? phone ?? 'User';
  // A signup that creates a wallet answers the app proofs of its addresses (signup's `appProofs`): the
  // app checks them against this deployment's signer key (docs/embedded-wallets.md); without them a
  // kit's `verifyWalletOnSignup` would skip its check silently.
  const r = await call.submit('create_sub_organization', 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', {
    subOrganizationName: optional<string>(body.organizationName) ?? `sub-org-${Date.now()}`,
    rootUsers: [
      {
        userName: name,
        ...(email ? { userEmail: email } : {}),
        ...(phone ? { userPhoneNumber: phone } : {}),
        apiKeys: body.apiKeys ?? [],
        authenticators: body.authenticators ?? [],
        oauthProviders: (body.oauthProviders ?? []).map((p: Json) => ({ providerName: p.providerName, oidcToken: p.oidcToken })),
      },
    ],
    rootQuorumThreshold: 1,
    ...(body.wallet ? { wallet: body.wallet } : {}),
    ...(body.verificationToken ? { verificationToken: body.verificationToken } : {}),
    ...(body.clientSignature ? { clientSignature: body.clientSignature } : {}),
  }, body.wallet !== undefined);
  return {
    organizationId: r.subOrganizationId,
    userId: r.rootUserIds?.[0],
    ...(r.wallet ? { wallet: r.wallet } : {}),
    appProofs: r.appProofs ?? [],
  };
}

/** `account`: the sub-organization holding a contact, an OIDC identity, a public key or a credential id. */
async function account(call: ProxyCall, services: Services, repos: Repositories) {
  const { body, settings, config } = call;
  need(body, 'filterType', 'filterValue');
  const type = String(body.filterType);
  const filterValue = String(body.filterValue);
  if (type === 'EMAIL' || type === 'PHONE_NUMBER') {
    const token = optional<string>(body.verificationToken);
    if (token) {
      const claims = await readVerificationToken(token, services.signer.publicKey, Date.now());
      const kind = contactKindOf(claims);
      if (claims.organization_id !== config.organization_id || (kind === 'email') !== (type === 'EMAIL') || !sameContact(kind, claims.contact, filterValue)) {
        throw invalid('invalid verification token: it does not verify this contact for this organization');
      }
    } else if (settings.verificationTokenRequiredForGetAccountPii) {
      throw invalid('a verificationToken for this contact is required to look up an account by email or phone number');
    }
  } else if (type === 'OIDC_TOKEN') {
    // Verified first, so account lookups cannot probe identities with forged tokens.
    await services.oidc.verify(filterValue, {});
  } else if (!['PUBLIC_KEY', 'CREDENTIAL_ID', 'NAME', 'USERNAME'].includes(type)) {
    throw invalid(`bad request body: filterType must be one of EMAIL, PHONE_NUMBER, OIDC_TOKEN, PUBLIC_KEY, CREDENTIAL_ID, NAME, USERNAME`);
  }
  // A contact answers only the sub-organization where it is verified or the parent set it: the
  // @turnkey/core OTP flow logs in to whatever this answers, and anyone who owns a sub-organization
  // can write any email into it (docs/compatibility.md "Email and SMS logins through the parent").
  const r =
    type === 'EMAIL' || type === 'PHONE_NUMBER'
      ? { organizationIds: await subOrganizationsTrustingContact(repos, config.organization_id, type, filterValue) }
      : await call.query('list_suborgs', { filterType: type, filterValue, paginationOptions: { limit: '2' } });
  const ids: string[] = r.organizationIds ?? [];
  return ids.length > 0 ? { organizationId: ids[0] } : {};
}

async function oauth2Authenticate(call: ProxyCall) {
  const { body } = call;
  need(body, 'provider', 'authCode', 'redirectUri', 'codeVerifier', 'nonce', 'clientId');
  const list = await call.query('list_oauth2_credentials', {});
  const credential = (list.oauth2Credentials ?? []).find((c: Json) => c.provider === body.provider && c.clientId === body.clientId);
  if (!credential) {
    throw new SigilError('NOT_FOUND', `no OAuth 2.0 credential for provider ${body.provider} and client id ${body.clientId} in this organization`);
  }
  const r = await call.submit('oauth2_authenticate', 'ACTIVITY_TYPE_OAUTH2_AUTHENTICATE', {
    oauth2CredentialId: credential.oauth2CredentialId,
    authCode: body.authCode,
    redirectUri: body.redirectUri,
    codeVerifier: body.codeVerifier,
    nonce: body.nonce,
  });
  return { oidcToken: r.oidcToken };
}

const ENDPOINTS: Record<string, Endpoint> = {
  otp_init: { methods: otpMethod, handle: async (c) => ({ otpId: (await initOtp(c)).otpId }) },
  otp_init_v2: {
    methods: otpMethod,
    handle: async (c) => {
      const r = await initOtp(c);
      return { otpId: r.otpId, otpEncryptionTargetBundle: r.otpEncryptionTargetBundle };
    },
  },
  otp_verify: {
    methods: () => ['email', 'sms'],
    handle: async (c) => {
      need(c.body, 'otpId', 'otpCode');
      const r = await c.submit('verify_otp', 'ACTIVITY_TYPE_VERIFY_OTP', {
        otpId: c.body.otpId,
        otpCode: c.body.otpCode,
        ...(c.body.publicKey ? { publicKey: c.body.publicKey } : {}),
        expirationSeconds: String(c.settings.verificationTokenExpirationSeconds),
      });
      return { verificationToken: r.verificationToken };
    },
  },
  otp_verify_v2: {
    methods: () => ['email', 'sms'],
    handle: async (c) => {
      need(c.body, 'otpId', 'encryptedOtpBundle');
      const r = await c.submit('verify_otp', 'ACTIVITY_TYPE_VERIFY_OTP_V2', {
        otpId: c.body.otpId,
        encryptedOtpBundle: c.body.encryptedOtpBundle,
        expirationSeconds: String(c.settings.verificationTokenExpirationSeconds),
      });
      return { verificationToken: r.verificationToken };
    },
  },
  otp_login: { methods: () => ['email', 'sms'], handle: (c) => otpLogin(c, false) },
  otp_login_v2: { methods: () => ['email', 'sms'], handle: (c) => otpLogin(c, true) },
  signup: { handle: signup },
  signup_v2: { handle: signup },
  oauth_login: {
    methods: () => [...OAUTH_METHODS],
    handle: async (c) => {
      need(c.body, 'oidcToken', 'publicKey');
      const r = await c.submit('oauth_login', 'ACTIVITY_TYPE_OAUTH_LOGIN', {
        oidcToken: c.body.oidcToken,
        publicKey: c.body.publicKey,
        expirationSeconds: String(c.settings.sessionExpirationSeconds),
        invalidateExisting: c.body.invalidateExisting === true,
      });
      return { session: r.session };
    },
  },
  oauth2_authenticate: { methods: () => ['x', 'discord'], handle: oauth2Authenticate },
  account: { handle: account },
  wallet_kit_config: {
    handle: async ({ settings, config }) => ({
      enabledProviders: settings.allowedAuthMethods,
      sessionExpirationSeconds: String(settings.sessionExpirationSeconds),
      organizationId: config.organization_id,
      oauthClientIds: settings.walletKit.oauthClientIds,
      oauthRedirectUrl: settings.walletKit.oauthRedirectUrl,
      otpAlphanumeric: settings.otpAlphanumeric,
      otpLength: String(settings.otpLength),
    }),
  },
  // No captcha provider is configured in Sigil: an empty site key tells clients to skip it.
  wallet_kit_client_params: { handle: async () => ({ turnstileSiteKey: '' }) },
};

/** The endpoints under /v1/ (the fuzz suite reaches each). */
export const AUTH_PROXY_ENDPOINTS: readonly string[] = Object.keys(ENDPOINTS);

/** The configuration a request names, checked against its Origin. */
async function configFor(repos: Repositories, req: FastifyRequest): Promise<{ config: AuthProxyConfigRow; settings: AuthProxySettings }> {
  const id = req.headers['x-auth-proxy-config-id'];
  if (typeof id !== 'string' || id === '') {
    throw invalid('missing X-Auth-Proxy-Config-ID header: send the id of an auth proxy configuration (sigil proxy-config list)');
  }
  const config = await requireAuthProxyConfig(repos, id);
  if (config.enabled !== 1) throw new SigilError('REQUEST_NOT_AUTHORIZED', `auth proxy config ${config.id} is disabled`);
  const settings = settingsOf(config);
  const origin = req.headers.origin;
  if (typeof origin === 'string' && origin !== '' && !settings.allowedOrigins.includes('*') && !settings.allowedOrigins.includes(origin)) {
    throw new SigilError('REQUEST_NOT_AUTHORIZED', `origin ${origin} is not allowed by auth proxy config ${config.id}`);
  }
  return { config, settings };
}

export async function authProxyServer(opts: {
  logger: Logger;
  transport: TransportLimits;
  ready: () => Promise<void>;
  sealed?: () => boolean;
  unavailable?: () => string | undefined;
  pipeline: Pipeline;
  repos: Repositories;
  services: Services & { barrier: Barrier };
  trustedProxies?: string[];
}) {
  const app = await baseServer(opts);
  app.post<{ Params: { operation: string } }>('/v1/:operation', { onRequest: requireJsonBody }, async (req, reply) => {
    const endpoint = Object.hasOwn(ENDPOINTS, req.params.operation) ? ENDPOINTS[req.params.operation] : undefined;
    if (!endpoint) throw new SigilError('NOT_FOUND', `no such auth proxy endpoint: POST /v1/${req.params.operation}`);
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    // The same shape limits as the public API, before anything reads the body.
    const body: Json = raw.length > 0 ? parseBody(raw, opts.pipeline.limits) : {};
    const { config, settings } = await configFor(opts.repos, req);
    const wanted = endpoint.methods?.(body);
    if (wanted && wanted.length > 0 && !wanted.some((m) => settings.allowedAuthMethods.includes(m))) {
      throw disallowed(wanted.some((m) => OAUTH_METHODS.includes(m)) ? 'OAUTH' : wanted.join('/').toUpperCase());
    }
    const key = await proxyPrivateKey(opts.services.barrier, opts.repos, config);
    const signer = new P256Signer(key);
    key.fill(0);
    const send = async (kind: 'submit' | 'query', operation: string, payload: Json): Promise<Json> => {
      const rawBody = Buffer.from(JSON.stringify(payload));
      const stamp = Buffer.from(
        JSON.stringify({ publicKey: signer.publicKeyHex, scheme: 'SIGNATURE_SCHEME_TK_API_P256', signature: signer.signDer(rawBody) }),
      ).toString('base64url');
      const request = { kind, operation, rawBody, headers: { 'x-stamp': stamp }, clientAddress: req.ip, viaAuthProxy: true, identity: {} };
      try {
        return (await opts.pipeline.handle(request)).body as Json;
      } catch (err) {
        const e = toSigilError(err, req.log);
        await opts.pipeline.recordRefusal(request, e).catch((auditErr) => req.log.error({ err: auditErr }, 'audit log append failed for a refused request'));
        throw e;
      }
    };
    const call: ProxyCall = {
      config,
      settings,
      body,
      takeSignup: async () => {
        const headers: Record<string, string> = {};
        try {
          await opts.pipeline.rateLimiter.takeSignup(req.ip, Date.now(), headers);
        } finally {
          reply.headers(headers);
        }
      },
      query: (operation, payload) => send('query', operation, { organizationId: config.organization_id, ...payload }),
      submit: async (operation, type, parameters, generateAppProofs = false) => {
        const envelope = { type, timestampMs: String(Date.now()), organizationId: config.organization_id, parameters };
        const res = await send('submit', operation, generateAppProofs ? { ...envelope, generateAppProofs } : envelope);
        const activity = res.activity as Json;
        if (activity?.status !== 'ACTIVITY_STATUS_COMPLETED') {
          throw new SigilError('REQUEST_NOT_AUTHORIZED', `the ${operation} activity ${activity?.id} did not complete (${activity?.status}): check the auth proxy policy of organization ${config.organization_id}`);
        }
        const result = (activity.result ?? {}) as Json;
        const member = Object.keys(result).find((k) => k !== 'activity');
        return { ...(member ? result[member] : {}), ...(activity.appProofs ? { appProofs: activity.appProofs } : {}) };
      },
    };
    return reply.send(await endpoint.handle(call, opts.services, opts.repos));
  });
  return app;
}
