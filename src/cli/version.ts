// Sigil's version, from package.json: what `sigil version`, the help text and boot proofs name. Its
// own module so that the CLI can print it without loading the server.
import { readFileSync } from 'node:fs';

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
