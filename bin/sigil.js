#!/usr/bin/env node
// Entry point of the `sigil` command; the TypeScript sources are compiled to dist/ by `npm run build`
// (run automatically by `npm install` through the prepare script). The Node.js version is checked
// first: the compiled code is loaded only on a Node that package.json's `engines` allows.
import { readFileSync } from 'node:fs';
import { unsupportedNodeMessage } from './node-version.js';

const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const unsupported = unsupportedNodeMessage(process.versions.node, engines.node);
if (unsupported) {
  process.stderr.write(`sigil: ${unsupported}\n`);
  process.exit(1);
}

const { main } = await import('../dist/cli/main.js');
main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`sigil: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
