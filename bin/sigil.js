#!/usr/bin/env node
// Entry point of the `sigil` command; the TypeScript sources are compiled to dist/ by `npm run build`
// (run automatically by `npm install` through the prepare script).
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`sigil: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
