// The frames server (docs/embedded-wallets.md): Sigil's own export, import, export-and-sign and auth
// pages, which the browser kits embed through @turnkey/iframe-stamper, on a port of their own so a
// frame never shares an origin with the app around it. The browser code is src/frames/, bundled by
// scripts/build-frames.mjs into dist/frames/ and read once at start (no request path reaches the
// file system, as for the dashboard).
//
// Each page gets, from this server and not from a build, what it must trust: the deployment's
// signer public key (export and import bundles are verified against it) and the origins allowed to
// embed it (the operator's SIGIL_WEBAUTHN_ORIGINS, the same list passkeys are bound to). The browser
// enforces the latter through `Content-Security-Policy: frame-ancestors`, and the page checks it
// again on the message that opens its channel.
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { SigilError } from '../errors/errors.js';
import { loadAssets } from './dashboard.js';
import { baseServer } from './public-api.js';
import type { TransportLimits } from './transport.js';

/** dist/http/frames.js → dist/frames/ (the build's output folder for the frames' browser code). */
export const FRAMES_DIR = fileURLToPath(new URL('../frames/', import.meta.url));

/** The frames by the name /.well-known/sigil.json lists them under, and the path each is served at. */
export const FRAME_PATHS = { export: '/export', import: '/import', exportAndSign: '/export-and-sign', auth: '/auth' } as const;

const PAGE_OF: Record<string, string> = { '/export': 'export', '/import': 'import', '/export-and-sign': 'export-and-sign', '/auth': 'auth' };

export interface FramesOptions {
  logger: Logger;
  transport: TransportLimits;
  ready: () => Promise<void>;
  /** Uncompressed hex of the deployment's bundle signer key. */
  signerPublicKey: string;
  /** Origins allowed to embed the frames (config.webauthnOrigins); `*` allows any. */
  allowedOrigins: string[];
  trustedProxies?: string[];
  dir?: string;
}

/** An origin as it may appear in a CSP source list: scheme, host and optional port, nothing else. */
const ORIGIN = /^https?:\/\/(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

export function frameAncestors(allowedOrigins: string[]): string {
  if (allowedOrigins.includes('*')) return '*';
  const sources = allowedOrigins.filter((o) => ORIGIN.test(o));
  return sources.length > 0 ? sources.join(' ') : "'none'";
}

export function framesContentSecurityPolicy(allowedOrigins: string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    // The frames talk to nobody: bundles come in and results go out only through the message channel.
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors(allowedOrigins)}`,
  ].join('; ');
}

/** JSON that is safe inside a <script type="application/json"> element. */
function inlineJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

export async function framesServer(opts: FramesOptions) {
  const app = await baseServer(opts);
  const assets = loadAssets(opts.dir ?? FRAMES_DIR);
  const csp = framesContentSecurityPolicy(opts.allowedOrigins);
  const settings = inlineJson({
    signerPublicKey: opts.signerPublicKey,
    allowedOrigins: opts.allowedOrigins.includes('*') ? ['*'] : opts.allowedOrigins.filter((o) => ORIGIN.test(o)),
  });
  // Pages are rendered once: the settings are the same for every request of this process.
  const pages = new Map<string, Buffer>();
  for (const name of Object.values(PAGE_OF)) {
    const template = assets.get(`${name}.html`);
    if (template) pages.set(name, Buffer.from(template.body.toString('utf8').replace('{{SIGIL_FRAME_SETTINGS}}', settings), 'utf8'));
  }
  const missing = () => new SigilError('NOT_FOUND', 'the frames are not built: run "npm run build" (scripts/build-frames.mjs bundles src/frames/ into dist/frames/)');
  const common = (reply: import('fastify').FastifyReply) =>
    reply
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('permissions-policy', 'camera=(), microphone=(), geolocation=(), publickey-credentials-get=(), publickey-credentials-create=()');
  for (const [path, name] of Object.entries(PAGE_OF)) {
    app.get(path, async (_req, reply) => {
      const page = pages.get(name);
      if (!page) throw missing();
      // A page holds the key it was served with in memory only; never keep a stale copy around.
      return common(reply).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page);
    });
  }
  app.get<{ Params: { '*': string } }>('/assets/*', async (req, reply) => {
    const asset = assets.get(`assets/${req.params['*']}`);
    if (!asset) throw new SigilError('NOT_FOUND', `no such frame file: /assets/${req.params['*'].slice(0, 200)}`);
    common(reply).header('cache-control', 'no-cache').header('etag', asset.etag);
    if (req.headers['if-none-match'] === asset.etag) return reply.status(304).send();
    return reply.type(asset.type).send(asset.body);
  });
  return app;
}

/** The frame URLs under `base` (an origin), as /.well-known/sigil.json lists them. */
export function frameUrls(base: string): Record<keyof typeof FRAME_PATHS, string> {
  return {
    export: base + FRAME_PATHS.export,
    import: base + FRAME_PATHS.import,
    exportAndSign: base + FRAME_PATHS.exportAndSign,
    auth: base + FRAME_PATHS.auth,
  };
}
