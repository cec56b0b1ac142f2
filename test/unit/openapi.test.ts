// The OpenAPI document Sigil serves at GET /openapi.json (src/operations/openapi.ts): it is valid
// OpenAPI 3.1 (root fields, operations, every reference resolves, every schema is JSON Schema 2020-12
// and compiles), it lists exactly what the registry serves, and it agrees with the official API as
// @turnkey/http ships it (the package's generated public_api.types.d.ts, read with the TypeScript
// parser): each path exists there with the same method, each submission's type value, required
// envelope fields, parameters and intent fields match, each query's required fields match.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import ts from 'typescript';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Registry } from '../../src/operations/registry.js';
import { openApiDocument } from '../../src/operations/openapi.js';

const registry = new Registry();
const doc = openApiDocument(registry, '0.0.0-test') as any;
const schemas: Record<string, any> = doc.components.schemas;

// ---- the official API, from the types @turnkey/http generates from Turnkey's swagger ----

interface OfficialDefinition {
  /** Property name → optional? (undefined when the definition is not an object literal: an enum, a map). */
  fields?: Map<string, boolean>;
  /** The literal value of a `type` property (a request's activity type). */
  typeLiteral?: string;
  /** The definition a `parameters` property refers to (a request's intent). */
  parameters?: string;
}

const require = createRequire(import.meta.url);
const typesPath = require.resolve('@turnkey/http').replace(/dist\/.*$/, 'dist/__generated__/services/coordinator/public/v1/public_api.types.d.ts');
const source = ts.createSourceFile(typesPath, readFileSync(typesPath, 'utf8'), ts.ScriptTarget.Latest);

function alias(name: string): ts.TypeLiteralNode {
  for (const s of source.statements) if (ts.isTypeAliasDeclaration(s) && s.name.text === name && ts.isTypeLiteralNode(s.type)) return s.type;
  throw new Error(`@turnkey/http types: no type ${name}`);
}
const nameOf = (m: ts.TypeElement) => (m.name && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name) || ts.isNumericLiteral(m.name)) ? m.name.text : '');
function member(t: ts.TypeNode | undefined, name: string): ts.PropertySignature | undefined {
  if (!t || !ts.isTypeLiteralNode(t)) return undefined;
  return t.members.find((m): m is ts.PropertySignature => ts.isPropertySignature(m) && nameOf(m) === name);
}
/** `definitions["X"]` or `operations["X"]` → X. */
function indexed(t: ts.TypeNode | undefined): string | undefined {
  if (t && ts.isIndexedAccessTypeNode(t) && ts.isLiteralTypeNode(t.indexType) && ts.isStringLiteral(t.indexType.literal)) return t.indexType.literal.text;
  return undefined;
}

const official = {
  definitions: new Map<string, OfficialDefinition>(),
  /** Path → method → operation name. */
  paths: new Map<string, Map<string, string>>(),
  /** Operation name → its request and 200 response definitions. */
  operations: new Map<string, { request?: string; response?: string }>(),
};
for (const m of alias('definitions').members) {
  if (!ts.isPropertySignature(m)) continue;
  const def: OfficialDefinition = {};
  if (m.type && ts.isTypeLiteralNode(m.type)) {
    def.fields = new Map(m.type.members.filter(ts.isPropertySignature).map((p) => [nameOf(p), !!p.questionToken]));
    const type = member(m.type, 'type')?.type;
    if (type && ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)) def.typeLiteral = type.literal.text;
    def.parameters = indexed(member(m.type, 'parameters')?.type);
  }
  official.definitions.set(nameOf(m), def);
}
for (const m of alias('paths').members) {
  if (!ts.isPropertySignature(m) || !m.type || !ts.isTypeLiteralNode(m.type)) continue;
  official.paths.set(nameOf(m), new Map(m.type.members.filter(ts.isPropertySignature).map((p) => [nameOf(p), indexed(p.type) ?? ''])));
}
for (const m of alias('operations').members) {
  if (!ts.isPropertySignature(m)) continue;
  const body = member(member(member(m.type, 'parameters')?.type, 'body')?.type, 'body');
  const ok = member(member(member(m.type, 'responses')?.type, '200')?.type, 'schema');
  official.operations.set(nameOf(m), { request: indexed(body?.type), response: indexed(ok?.type) });
}

// ---- helpers over Sigil's document ----

function resolve(ref: string): any {
  const m = /^#\/components\/schemas\/(.+)$/.exec(ref);
  if (!m) throw new Error(`not a component reference: ${ref}`);
  return schemas[m[1]];
}
function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refsIn(n, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}
/** A schema's object variants: itself, or each alternative of a oneOf/anyOf, with references followed. */
function variants(schema: any): any[] {
  if (schema.$ref) return variants(resolve(schema.$ref));
  const alternatives = schema.oneOf ?? schema.anyOf;
  return alternatives ? alternatives.flatMap(variants) : [schema];
}
/** Paths Sigil still answers under an older name, with the official path they stand for. */
const OLDER_PATHS: Record<string, string> = { '/public/v1/query/get_whoami': '/public/v1/query/whoami' };

const requestOf = (path: string) => doc.paths[path].post.requestBody.content['application/json'].schema;
const fieldsOf = (schema: any) => ({ names: Object.keys(schema.properties ?? {}).sort(), required: [...(schema.required ?? [])].sort() });
function officialFields(name: string) {
  const def = official.definitions.get(name);
  if (!def?.fields) throw new Error(`@turnkey/http types: ${name} is not an object definition`);
  return { names: [...def.fields.keys()].sort(), required: [...def.fields].filter(([, optional]) => !optional).map(([n]) => n).sort() };
}

describe('GET /openapi.json: a valid OpenAPI 3.1 document', () => {
  it('has the root fields, and every operation an id, a JSON request body and its responses', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(typeof doc.info.title).toBe('string');
    expect(doc.info.version).toBe('0.0.0-test');
    const ids = new Set<string>();
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      expect(path).toMatch(/^\/public\/v1\/(submit|query)\/[a-z0-9_]+$/);
      expect(Object.keys(item)).toEqual(['post']);
      const op = item.post;
      expect(ids.has(op.operationId), `operationId ${op.operationId} is unique`).toBe(false);
      ids.add(op.operationId);
      expect(op.requestBody.content['application/json'].schema).toBeTypeOf('object');
      expect(op.responses['200'].content['application/json'].schema).toBeTypeOf('object');
      expect(op.responses.default.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/SigilError' });
      for (const requirement of op.security) for (const scheme of Object.keys(requirement)) expect(doc.components.securitySchemes[scheme], scheme).toBeDefined();
    }
  });

  it('every reference resolves, every schema is JSON Schema 2020-12, and all of them compile together', () => {
    const dangling = refsIn(doc).filter((r) => resolve(r) === undefined);
    expect(dangling).toEqual([]);
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const [name, schema] of Object.entries(schemas)) expect(ajv.validateSchema(schema), `${name}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
    // The whole document as one schema resource, so component references resolve as a client resolves them.
    ajv.addSchema({ $id: 'sigil-openapi', components: doc.components }, 'sigil-openapi');
    const compile = (s: unknown) => ajv.compile(JSON.parse(JSON.stringify(s).replaceAll('"#/components/', '"sigil-openapi#/components/')));
    const distinct = new Set<string>();
    for (const item of Object.values<any>(doc.paths)) {
      distinct.add(JSON.stringify(item.post.requestBody.content['application/json'].schema));
      distinct.add(JSON.stringify(item.post.responses['200'].content['application/json'].schema));
    }
    for (const s of distinct) expect(() => compile(JSON.parse(s)), s.slice(0, 120)).not.toThrow();
    // The request schema decides: a submission as the SDK sends it passes, one without organizationId does not.
    const createUsers = compile(requestOf('/public/v1/submit/create_users'));
    const body = {
      type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
      timestampMs: '1700000000000',
      organizationId: '6f2c6b5e-0d7f-4b8e-9a43-2d1f0c9e8a11',
      parameters: { users: [{ userName: 'Ada', userTags: [], apiKeys: [], authenticators: [], oauthProviders: [] }] },
    };
    expect(createUsers(body), ajv.errorsText(createUsers.errors)).toBe(true);
    expect(createUsers({ ...body, organizationId: undefined })).toBe(false);
    expect(createUsers({ ...body, type: 'ACTIVITY_TYPE_CREATE_USERS' })).toBe(false);
  });

  it('states the error body {code, message, details} Sigil answers with', () => {
    expect(schemas.SigilError.required).toEqual(['code', 'message', 'details']);
    expect(Object.keys(schemas.SigilError.properties)).toEqual(['code', 'message', 'details']);
  });
});

describe('GET /openapi.json: what the registry serves, as the official API states it', () => {
  it('lists exactly the registry\'s operations, each under its declared type values', () => {
    const expected = [...[...registry.activities.keys()].map((p) => `/public/v1/submit/${p}`), ...[...registry.queries.keys()].map((p) => `/public/v1/query/${p}`)].sort();
    expect(Object.keys(doc.paths).sort()).toEqual(expected);
    for (const [path, bindings] of registry.typeBindings) {
      const types = variants(requestOf(`/public/v1/submit/${path}`)).flatMap((v) => v.properties.type.enum);
      expect(types.sort(), path).toEqual([...bindings.keys()].sort());
    }
  });

  it('every path exists in @turnkey/http with the same method and the same answer', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      const theirs = official.paths.get(OLDER_PATHS[path] ?? path);
      if (!theirs?.has('post')) {
        missing.push(path);
        continue;
      }
      const response = official.operations.get(theirs.get('post')!)!.response!;
      const mine = item.post.responses['200'].content['application/json'].schema;
      // A definition of the same name, or (for a path the bundled swagger lacks) an inline schema with its fields.
      if (mine.$ref) expect(mine.$ref, path).toBe(`#/components/schemas/${response}`);
      else expect(fieldsOf(mine), path).toEqual(officialFields(response));
    }
    expect(missing).toEqual([]);
  });

  it('each submission\'s current type value, required envelope fields, parameters and intent fields are the official request\'s', () => {
    for (const path of registry.activities.keys()) {
      const url = `/public/v1/submit/${path}`;
      const request = official.operations.get(official.paths.get(url)!.get('post')!)!.request!;
      const theirs = official.definitions.get(request)!;
      // The type value the official SDK sends on this path is one Sigil accepts there.
      const mine = variants(requestOf(url)).find((v) => v.properties.type.enum.includes(theirs.typeLiteral));
      expect(mine, `${url} accepts ${theirs.typeLiteral}`).toBeDefined();
      const theirFields = officialFields(request);
      expect(fieldsOf(mine).required, url).toEqual(theirFields.required);
      expect(fieldsOf(mine).names, url).toEqual(expect.arrayContaining(theirFields.names));
      // The intent that type value carries: the same definition, with the same fields and required fields.
      const intent = theirs.parameters;
      const mineIntents = variants(mine.properties.parameters);
      const same = mineIntents.find((s) => JSON.stringify(fieldsOf(s)) === JSON.stringify(officialFields(intent!)));
      expect(same, `${url}: an accepted parameters schema has the fields of ${intent}`).toBeDefined();
    }
  });

  it('each query\'s required fields are the official request\'s', () => {
    for (const path of registry.queries.keys()) {
      const url = `/public/v1/query/${path}`;
      const request = official.operations.get(official.paths.get(OLDER_PATHS[url] ?? url)!.get('post')!)!.request!;
      const [mine] = variants(requestOf(url));
      expect(fieldsOf(mine).required, url).toEqual(officialFields(request).required);
    }
  });

  it('every component schema named like an official definition has its fields and required fields', () => {
    const differ: string[] = [];
    for (const [name, schema] of Object.entries<any>(schemas)) {
      const def = official.definitions.get(name);
      if (!def?.fields || schema.type !== 'object') continue;
      const theirs = officialFields(name);
      const mine = fieldsOf(schema);
      if (JSON.stringify(mine.required) !== JSON.stringify(theirs.required) || mine.names.some((n) => !theirs.names.includes(n))) differ.push(name);
    }
    expect(differ).toEqual([]);
  });
});
