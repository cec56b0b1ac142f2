// The dashboard's static files on the public API port (docs/operator-guide.md): GET / answers the page,
// GET /dashboard/<file> its modules, styles and icon, all built into dist/dashboard/ by `npm run
// build` (dashboard/tsconfig.json + scripts/copy-dashboard-assets.mjs). The browser code then talks
// to the public API like any client, with stamped POSTs (docs/reference/api.md "Stamps").
//
// Safety: the files are read once at start into a table keyed by their relative path, and a request
// is answered only when its path is a key of that table, so no request path ever reaches the file
// system (no traversal, no symlinks followed at request time). Every answer carries a strict
// Content-Security-Policy: scripts and styles only from this origin, no inline script, no framing;
// network access to this origin and, for the auth proxy (another port), the same host name.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SigilError } from '../errors/errors.js';

/** dist/http/dashboard.js → dist/dashboard/ (the build's output folder for the browser code). */
export const DASHBOARD_DIR = fileURLToPath(new URL('../dashboard/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** Every servable file under `dir`, by its path relative to `dir` with `/` separators. */
export function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(dir)) return assets;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      const st = statSync(full);
      if (st.isDirectory()) walk(full);
      else if (st.isFile() && Object.hasOwn(CONTENT_TYPES, extname(name))) {
        const body = readFileSync(full);
        const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
        assets.set(relative(dir, full).split(sep).join('/'), { body, type: CONTENT_TYPES[extname(name)], etag });
      }
    }
  };
  walk(dir);
  return assets;
}

/** A host name as it may appear in a CSP source (letters, digits, dots, dashes; or a bracketed IPv6). */
const HOSTNAME = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/i;

function hostnameOf(req: FastifyRequest): string | undefined {
  const host = req.headers.host ?? '';
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
  return HOSTNAME.test(name) ? name.toLowerCase() : undefined;
}

export function contentSecurityPolicy(hostname: string | undefined): string {
  // The auth proxy listens on its own port of the same host: allow that host on any port.
  const proxy = hostname ? ` http://${hostname}:* https://${hostname}:*` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    `connect-src 'self'${proxy}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function send(req: FastifyRequest, reply: FastifyReply, asset: Asset) {
  reply
    .header('content-security-policy', contentSecurityPolicy(hostnameOf(req)))
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cross-origin-resource-policy', 'same-origin')
    .header('permissions-policy', 'publickey-credentials-get=(self), publickey-credentials-create=(self), camera=(), microphone=(), geolocation=()')
    // File names carry no content hash, so browsers revalidate every time (a cheap 304 by ETag).
    .header('cache-control', 'no-cache')
    .header('etag', asset.etag);
  if (req.headers['if-none-match'] === asset.etag) return reply.status(304).send();
  return reply.type(asset.type).send(asset.body);
}

/** Registers GET / and GET /dashboard/* on the public API server. */
// Any logger type: the servers are built with pino's Logger, which Fastify's default type does not name.
export function registerDashboard(app: FastifyInstance<any, any, any, any>, dir: string = DASHBOARD_DIR): void {
  const assets = loadAssets(dir);
  const missing = () => new SigilError('NOT_FOUND', 'the dashboard is not built: run "npm run build" (it compiles dashboard/ into dist/dashboard/)');
  app.get('/', async (req, reply) => {
    const index = assets.get('index.html');
    if (!index) throw missing();
    return send(req, reply, index);
  });
  app.get<{ Params: { '*': string } }>('/dashboard/*', async (req, reply) => {
    if (assets.size === 0) throw missing();
    const asset = assets.get(req.params['*']);
    if (!asset) throw new SigilError('NOT_FOUND', `no such dashboard file: /dashboard/${req.params['*'].slice(0, 200)}`);
    return send(req, reply, asset);
  });
}
