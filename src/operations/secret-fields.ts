// Bearer secrets in activity parameters and results (docs/design.md "Security model": never log
// a secret, an OTP code or a bundle). A bearer secret is anything whose mere possession lets its
// holder act: verification tokens, OIDC tokens, OTP codes, encrypted bundles sealed to the
// deployment, client signatures over token usages, OAuth 2.0 codes and verifiers, client secrets and
// passwords. None of them may be readable from an activity's intent or result, a vote's message, a
// policy evaluation, an audit entry or a log.
//
// Which fields are secret is decided here from the API's own schema (the swagger definitions in
// src/schemas), by field name and schema type, not by hand: the registry walks every parameter and
// result definition an operation accepts and refuses to start when a field of a secret kind is not in
// the operation's declared `secretFields` / `resultSecretFields`. Declarations name fields by path:
// `verificationToken`, `clientSignature.signature`, `rootUsers[].oauthProviders[].oidcToken`. A client
// signature keeps its object shape: only its `signature` is redacted.
import { definitions } from '../schemas/index.js';

/** A kind of bearer secret, recognised by a field's name and the JSON type its schema gives it. */
interface SecretKind {
  kind: string;
  name: RegExp;
  types: ReadonlyArray<'string' | 'object'>;
  /** Results also carry fields of this kind that must not be stored readable. */
  inResults: boolean;
  /**
   * The member of an object field that is the secret: only it is redacted, so the stored record
   * keeps the shape the API schema gives it (a v1ClientSignature stays an object).
   */
  member?: string;
}

/**
 * Every secret kind. Bundles count in parameters (sealed to the deployment, they open for whoever
 * submits them again); in results a bundle is HPKE-sealed to a key the requester holds
 * (`exportBundle`, `credentialBundle`) or is a public target (`otpEncryptionTargetBundle`,
 * `importBundle`), so only tokens and secrets are results' bearer secrets.
 */
export const SECRET_KINDS: readonly SecretKind[] = [
  { kind: 'verification token', name: /^verificationToken$/, types: ['string'], inResults: true },
  { kind: 'OIDC token', name: /^oidcToken$/, types: ['string'], inResults: true },
  { kind: 'OTP code', name: /^otpCode$/, types: ['string'], inResults: true },
  { kind: 'encrypted bundle', name: /^(encrypted[A-Za-z]*Bundle|[a-z]*ApprovalBundle|credentialBundle)$/, types: ['string'], inResults: false },
  { kind: 'client signature', name: /^clientSignature$/, types: ['object'], inResults: false, member: 'signature' },
  { kind: 'OAuth 2.0 code or verifier', name: /^(authCode|codeVerifier)$/, types: ['string'], inResults: true },
  { kind: 'secret or password', name: /(Secret|secret[A-Z]\w*Payload|^secretPayloads?$|[Pp]assword|[Pp]assphrase|^cvv$|^mnemonic$|^encryptedPrivate\w*)/, types: ['string'], inResults: true },
];

export const REDACTED = '<redacted>';

type Schema = Record<string, any>;

function resolve(schema: Schema | undefined, seen: ReadonlySet<string>): { schema?: Schema; seen: ReadonlySet<string> } {
  if (!schema?.$ref) return { schema, seen };
  const name = String(schema.$ref).split('/').pop()!;
  if (seen.has(name)) return { seen };
  return { schema: definitions[name], seen: new Set([...seen, name]) };
}

function typeOf(schema: Schema | undefined): string | undefined {
  if (!schema) return undefined;
  if (schema.type) return schema.type;
  if (schema.properties) return 'object';
  return undefined;
}

/** The secret fields of a swagger definition, as paths with `[]` for list items, and their kinds. */
export function secretFieldsOf(definition: string, where: 'parameters' | 'results'): { path: string; kind: string }[] {
  const out: { path: string; kind: string }[] = [];
  const walk = (raw: Schema | undefined, path: string, seen: ReadonlySet<string>) => {
    const { schema, seen: next } = resolve(raw, seen);
    if (!schema) return;
    if (schema.items) walk(schema.items, `${path}[]`, next);
    for (const [field, sub] of Object.entries<Schema>(schema.properties ?? {})) {
      const at = path ? `${path}.${field}` : field;
      const type = typeOf(resolve(sub, next).schema);
      const kind = SECRET_KINDS.find(
        (k) => k.name.test(field) && (where === 'parameters' || k.inResults) && k.types.includes(type as 'string' | 'object'),
      );
      if (kind) out.push({ path: kind.member ? `${at}.${kind.member}` : at, kind: kind.kind });
      else walk(sub, at, next);
    }
  };
  walk({ $ref: `#/definitions/${definition}` }, '', new Set());
  return out;
}

/** Whether a declared path covers `path` (the same field, or a parent of it). */
export function covers(declared: readonly string[] | undefined, path: string): boolean {
  return (declared ?? []).some((d) => path === d || path.startsWith(`${d}.`) || path.startsWith(`${d}[]`));
}

/** A copy of `value` with every declared secret path replaced by `<redacted>`. */
export function redactSecrets<T>(value: T, paths: readonly string[] | undefined): T {
  if (!paths || paths.length === 0) return value;
  const split = paths.map((p) => p.split(/\.|(?=\[\])/));
  const at = (node: unknown, segments: string[]): unknown => {
    if (segments.length === 0) return node === undefined ? undefined : REDACTED;
    const [head, ...rest] = segments;
    if (head === '[]') return Array.isArray(node) ? node.map((item) => at(item, rest)) : node;
    if (node === null || typeof node !== 'object' || Array.isArray(node) || !Object.hasOwn(node, head)) return node;
    return { ...(node as Record<string, unknown>), [head]: at((node as Record<string, unknown>)[head], rest) };
  };
  let out: unknown = value;
  for (const segments of split) out = at(out, segments);
  return out as T;
}
