// Part of `npm run build`: copies the dashboard's static files (dashboard/static: HTML, CSS, icon)
// beside its compiled modules in dist/dashboard/, where `sigil serve` serves them from
// (src/http/dashboard.ts). Plain file copies, no bundling.
import { cpSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../dashboard/static/', import.meta.url));
const to = fileURLToPath(new URL('../dist/dashboard/', import.meta.url));
mkdirSync(to, { recursive: true });
cpSync(from, to, { recursive: true });
