// Part of `npm run build`: bundles Sigil's frames (src/frames/*.ts, browser code;
// docs/embedded-wallets.md "Embedded wallets: Sigil's frames") with esbuild into dist/frames/assets/,
// one self-contained script per frame, and copies their pages and stylesheet beside them, where
// src/http/frames.ts serves them from. Nothing here depends on a deployment: the server writes the
// signer key and allowed origins into each page.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const src = fileURLToPath(new URL('../src/frames/', import.meta.url));
const out = fileURLToPath(new URL('../dist/frames/', import.meta.url));
const FRAMES = ['export', 'import', 'export-and-sign', 'auth'];

rmSync(out, { recursive: true, force: true });
mkdirSync(`${out}assets`, { recursive: true });
await build({
  entryPoints: FRAMES.map((f) => `${src}${f}.ts`),
  outdir: `${out}assets`,
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['chrome111', 'firefox111', 'safari16.4'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
for (const f of FRAMES) copyFileSync(`${src}${f}.html`, `${out}${f}.html`);
copyFileSync(`${src}frames.css`, `${out}assets/frames.css`);
