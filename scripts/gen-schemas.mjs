// Generates src/schemas/turnkey-definitions.json and src/schemas/turnkey-paths.json
// from the Turnkey public API OpenAPI (swagger 2) document, so that Sigil never needs the
// swagger file at run time. Descriptions are dropped; shapes, enums and `required` lists are kept
// verbatim. Usage: node scripts/gen-schemas.mjs <Turnkey's public_api.swagger.json>
import { readFileSync, writeFileSync } from 'node:fs';

const [, , swaggerPath] = process.argv;
if (!swaggerPath) throw new Error('usage: gen-schemas.mjs <public_api.swagger.json>');
const swagger = JSON.parse(readFileSync(swaggerPath, 'utf8'));

// What the bundled swagger lacks but the newest official client sends (velocity controls;
// init_import_secrets and delete_secrets): its definitions and paths, the two activity type values, and
// their intent and result members.
const supplement = JSON.parse(readFileSync(new URL('./swagger-supplement.json', import.meta.url), 'utf8'));
for (const [name, def] of Object.entries(supplement.definitions)) {
  if (swagger.definitions[name]) throw new Error(`swagger-supplement.json: the swagger already defines ${name}; drop it from the supplement`);
  swagger.definitions[name] = def;
}
for (const type of supplement.activityTypes) if (!swagger.definitions.v1ActivityType.enum.includes(type)) swagger.definitions.v1ActivityType.enum.push(type);
for (const [member, def] of Object.entries(supplement.intents)) swagger.definitions.v1Intent.properties[member] = { $ref: `#/definitions/${def}` };
for (const [member, def] of Object.entries(supplement.results)) swagger.definitions.v1Result.properties[member] = { $ref: `#/definitions/${def}` };
for (const [path, { request, response }] of Object.entries(supplement.paths)) {
  swagger.paths[path] = {
    post: {
      parameters: [{ in: 'body', name: 'body', schema: { $ref: `#/definitions/${request}` } }],
      responses: { 200: { schema: { $ref: `#/definitions/${response}` } } },
    },
  };
}

function strip(node) {
  if (Array.isArray(node)) return node.map(strip);
  if (node && typeof node === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === 'description' || k === 'title' || k === 'example' || k.startsWith('x-')) continue;
      // swagger puts "type":"object" next to "$ref"; JSON Schema ignores siblings of $ref in draft-07
      // only with strict mode off, so keep the $ref alone.
      if (k === 'type' && node.$ref) continue;
      out[k] = strip(v);
    }
    return out;
  }
  return node;
}

const definitions = strip(swagger.definitions);
const paths = {};
for (const [path, item] of Object.entries(swagger.paths)) {
  const m = /^\/public\/v1\/(submit|query)\/([a-z0-9_]+)$/.exec(path);
  if (!m) continue;
  const op = item.post;
  const body = op.parameters.find((p) => p.in === 'body');
  const reqDef = body.schema.$ref.replace('#/definitions/', '');
  const resDef = op.responses['200'].schema.$ref.replace('#/definitions/', '');
  const req = swagger.definitions[reqDef];
  const entry = { kind: m[1], request: reqDef, response: resDef };
  if (m[1] === 'submit') {
    entry.type = req.properties.type.enum[0];
    entry.parameters = req.properties.parameters.$ref.replace('#/definitions/', '');
  }
  paths[m[2]] = entry;
}
writeFileSync('src/schemas/turnkey-definitions.json', JSON.stringify({ $id: 'turnkey', definitions }) + '\n');
writeFileSync('src/schemas/turnkey-paths.json', JSON.stringify(paths, null, 1) + '\n');
console.log(`${Object.keys(definitions).length} definitions, ${Object.keys(paths).length} paths`);
