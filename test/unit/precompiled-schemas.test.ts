// The request validators the build precompiles (scripts/precompile-schemas.mjs into
// dist/schemas/validators.js) are there for every request schema the registry declares, and decide
// as Ajv compiling the same schema at run time does: same verdict, same first error. `npm test` builds
// first, so dist/ is this tree's.
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { Registry } from '../../src/operations/registry.js';
import { definitions, newAjv, precompiledName, schemaObjectOf, STANDALONE_DEFINITIONS, type RequestSchema } from '../../src/schemas/index.js';

const built = fileURLToPath(new URL('../../dist/schemas/validators.js', import.meta.url));

/** Bodies that break a schema in several ways: empty, wrong JSON types, each property with a wrong type. */
function samples(schema: RequestSchema): unknown[] {
  const names = (typeof schema === 'string' ? [schema] : Array.isArray(schema) ? schema : []) as string[];
  const props = new Set<string>();
  for (const n of names) for (const p of Object.keys(definitions[n]?.properties ?? {})) props.add(p);
  for (const p of Object.keys((schema as { properties?: object }).properties ?? {})) props.add(p);
  const out: unknown[] = [{}, null, [], 'text', 2 ** 40];
  for (const wrong of [12345, 'x', 2 ** 53, -(2 ** 31) - 1, 1.5, [{}], { a: 1 }, true]) {
    out.push(Object.fromEntries([...props].map((p) => [p, wrong])));
    for (const p of props) out.push({ [p]: wrong });
  }
  return out;
}

function firstError(v: ValidateFunction) {
  const e = v.errors?.[0];
  return e && { keyword: e.keyword, instancePath: e.instancePath, schemaPath: e.schemaPath, params: e.params, message: e.message };
}

describe.runIf(existsSync(built))('precompiled request validators', () => {
  it('exist for every request schema and decide as run-time compiled ones do', async () => {
    const precompiled = (await import(built)) as Record<string, ValidateFunction>;
    const ajv = newAjv();
    const schemas: RequestSchema[] = [...new Registry().requestSchemas(), ...STANDALONE_DEFINITIONS];
    expect(schemas.length).toBeGreaterThan(150);
    let compared = 0;
    for (const schema of schemas) {
      const fast = precompiled[precompiledName(schema)];
      expect(fast, `no precompiled validator for ${JSON.stringify(schema)}`).toBeTypeOf('function');
      const slow = ajv.compile(schemaObjectOf(schema));
      for (const body of samples(schema)) {
        const verdict = fast(body);
        expect(verdict, `${JSON.stringify(schema)} on ${JSON.stringify(body)}`).toBe(slow(body));
        expect(firstError(fast)).toEqual(firstError(slow));
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });
});
