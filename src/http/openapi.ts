// GET /openapi.json on the public API port: the OpenAPI document of the operations this Sigil serves,
// generated once at start-up from the registry (src/operations/openapi.ts; docs/design.md "An operation is data").
// It is public, like the swagger Turnkey publishes: it describes shapes, never an organization's data.
import type { FastifyInstance } from 'fastify';
import { openApiDocument } from '../operations/openapi.js';
import type { Registry } from '../operations/registry.js';

export function registerOpenApi(app: FastifyInstance<any, any, any, any>, registry: Registry, version: string): void {
  // Serialized once: the document only changes with the code.
  const body = JSON.stringify(openApiDocument(registry, version));
  app.get('/openapi.json', async (_req, reply) => reply.type('application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(body));
}
