// The registry: every operation Sigil serves, checked once at start-up (unique paths and type
// values; intent, parameter and result names that exist in the API schema). The pipeline finds an
// operation here by path and never by a switch on names.
import { definitions, hasDefinition, intentDefinitionOf, intentMemberOf, validatorOf, type RequestSchema } from '../schemas/index.js';
import type { ActivityDeclaration, Declaration, QueryDeclaration } from './define.js';
import { covers, secretFieldsOf } from './secret-fields.js';
import * as activities from './activities.js';
import * as apiKeys from './api-keys.js';
import * as authenticators from './authenticators.js';
import * as organizations from './organizations.js';
import * as userTags from './user-tags.js';
import * as users from './users.js';
import * as privateKeys from './private-keys.js';
import * as signing from './signing.js';
import * as wallets from './wallets.js';
import * as exportImport from './export-import.js';
import * as consensus from './consensus.js';
import * as appProofs from './app-proofs.js';
import * as policies from './policies.js';
import * as sessions from './sessions.js';
import * as ipAllowlists from './ip-allowlists.js';
import * as oauthProviders from './oauth-providers.js';
import * as otp from './otp.js';
import * as oauth from './oauth.js';
import * as emailAuth from './email-auth.js';
import * as oauth2Credentials from './oauth2-credentials.js';
import * as velocityControls from './velocity-controls.js';
import * as sessionProfiles from './session-profiles.js';
import * as secrets from './secrets.js';
import * as mfaPolicies from './mfa-policies.js';
import * as invitations from './invitations.js';
import * as webhooks from './webhooks.js';
import * as broadcasting from './broadcasting.js';
import * as solanaSends from './solana-sends.js';

const MODULES: Record<string, unknown>[] = [activities, apiKeys, appProofs, authenticators, consensus, exportImport, policies, organizations, privateKeys, signing, userTags, users, wallets, sessions, ipAllowlists, oauthProviders, otp, oauth, emailAuth, oauth2Credentials, velocityControls, sessionProfiles, secrets, mfaPolicies, invitations, webhooks, broadcasting, solanaSends];

function collect(): Declaration[] {
  const out: Declaration[] = [];
  for (const mod of MODULES) {
    for (const value of Object.values(mod)) {
      if (value && typeof value === 'object' && 'kind' in value && 'path' in value) out.push(value as Declaration);
    }
  }
  return out;
}

/** An activity type value accepted on a path, with the intent member and schema it maps to. */
export interface ActivityTypeBinding {
  type: string;
  intentMember: string;
  /** The swagger definition the parameters are validated against, or several (any one may match). */
  parametersDefinition: string | string[];
  /** The v1Result member the result is returned under (the declaration's, unless the alias differs). */
  result: string | undefined;
  /** Brings an older version's parameters to the shape the declaration's `execute` takes. */
  adapt?: (params: any) => any;
  /** Brings the declaration's result to the shape of an older version's result member. */
  adaptResult?: (result: any) => any;
}

/** The swagger definition a v1Result member refers to, e.g. verifyOtpResult → v1VerifyOtpResult. */
function resultDefinitionOf(member: string): string | undefined {
  const ref: string | undefined = definitions.v1Result?.properties?.[member]?.$ref;
  return ref?.replace('#/definitions/', '');
}

/**
 * Every bearer secret an operation's parameters or result can carry (src/operations/secret-fields.ts,
 * found from the schema by field name and type) must be declared secret, so the pipeline redacts it
 * from the stored intent, result and vote; otherwise the registry, and so the server, refuses to start.
 */
function checkSecretsDeclared(d: ActivityDeclaration, type: string, parameterDefinitions: string[], result: string | undefined): void {
  for (const def of parameterDefinitions) {
    for (const f of secretFieldsOf(def, 'parameters')) {
      if (!covers(d.secretFields, f.path)) {
        throw new Error(`registry: ${d.path} (${type}) has the parameter ${f.path} (${f.kind}, in ${def}) that secretFields does not declare`);
      }
    }
  }
  const resultDef = result ? resultDefinitionOf(result) : undefined;
  for (const f of resultDef ? secretFieldsOf(resultDef, 'results') : []) {
    if (!covers(d.resultSecretFields, f.path)) {
      throw new Error(`registry: ${d.path} (${type}) answers ${f.path} (${f.kind}, in ${resultDef}) that resultSecretFields does not declare`);
    }
  }
}

export class Registry {
  readonly activities = new Map<string, ActivityDeclaration>();
  readonly queries = new Map<string, QueryDeclaration>();
  /** Per activity path: the accepted type values. */
  readonly typeBindings = new Map<string, Map<string, ActivityTypeBinding>>();
  /** Per type value (current or alias): its operation, to resume a waiting activity. */
  readonly byType = new Map<string, { decl: ActivityDeclaration; binding: ActivityTypeBinding }>();

  constructor(declarations: Declaration[] = collect()) {
    const seenTypes = new Map<string, string>();
    const resultMembers = definitions.v1Result?.properties ?? {};
    for (const d of declarations) {
      if (d.kind === 'query') {
        if (this.queries.has(d.path)) throw new Error(`registry: duplicate query path ${d.path}`);
        if (typeof d.request === 'string' && !hasDefinition(d.request)) {
          throw new Error(`registry: query ${d.path} names unknown request schema ${d.request}`);
        }
        this.queries.set(d.path, d);
        continue;
      }
      if (this.activities.has(d.path)) throw new Error(`registry: duplicate activity path ${d.path}`);
      if (d.result !== undefined && !(d.result in resultMembers)) throw new Error(`registry: ${d.path} names unknown result member ${d.result}`);
      const bindings = new Map<string, ActivityTypeBinding>();
      for (const entry of [d.type, ...(d.aliases ?? [])]) {
        const alias = typeof entry === 'string' ? { type: entry } : entry;
        const { type } = alias;
        const other = seenTypes.get(type);
        if (other) throw new Error(`registry: type ${type} is declared by both ${other} and ${d.path}`);
        seenTypes.set(type, d.path);
        const intentMember = intentMemberOf(type);
        const own = intentDefinitionOf(intentMember);
        if (!own) throw new Error(`registry: ${type} has no intent member ${intentMember} in the schema`);
        for (const p of alias.parameters ?? []) {
          if (!hasDefinition(p)) throw new Error(`registry: ${type} names unknown parameter schema ${p}`);
        }
        const result = alias.result ?? d.result;
        if (result !== undefined && !(result in resultMembers)) throw new Error(`registry: ${type} names unknown result member ${result}`);
        bindings.set(type, { type: alias.spelling ? d.type : type, intentMember, parametersDefinition: alias.parameters ?? own, result, adapt: alias.adapt, adaptResult: alias.adaptResult });
        checkSecretsDeclared(d, type, alias.parameters ?? [own], result);
        this.byType.set(type, { decl: d, binding: bindings.get(type)! });
      }
      this.activities.set(d.path, d);
      this.typeBindings.set(d.path, bindings);
    }
  }

  /** Every request schema the pipeline validates with, as declared: what the build precompiles (scripts/precompile-schemas.mjs). */
  requestSchemas(): RequestSchema[] {
    const out: RequestSchema[] = [];
    for (const bindings of this.typeBindings.values()) for (const b of bindings.values()) out.push(b.parametersDefinition);
    for (const q of this.queries.values()) out.push(q.request);
    return out;
  }

  /**
   * Readies every request schema's validator now, at start-up: compiling one on its first request
   * costs up to ~60 ms of event loop (create_sub_organization), which no request should pay.
   * From dist/ they were compiled by the build, and this only looks them up.
   */
  compileSchemas(): void {
    for (const schema of this.requestSchemas()) validatorOf(schema);
  }

  all(): Declaration[] {
    return [...this.activities.values(), ...this.queries.values()];
  }
}
