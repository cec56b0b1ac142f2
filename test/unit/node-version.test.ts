// The Node.js version check of `sigil` (bin/node-version.js; the Node.js lines README.md "Quick start"
// names): versions below package.json's `engines.node` get one line naming the supported versions and
// exit 1, before any compiled code loads; supported ones run.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { RECOMMENDED_NODE_LINES, unsupportedNodeMessage } from '../../bin/node-version.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const engines = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).engines.node as string;

describe('Node.js version check', () => {
  it('accepts the engines floor and the maintained lines, refuses older versions naming the supported ones', () => {
    for (const v of ['20.19.0', '22.0.0', '22.12.0', '24.0.0', '24.21.0']) expect(unsupportedNodeMessage(v, engines), v).toBeUndefined();
    for (const v of ['16.20.2', '18.20.8', '20.18.3']) {
      const message = unsupportedNodeMessage(v, engines);
      expect(message, v).toContain(`Node.js ${v} is not supported`);
      expect(message).toContain(engines);
      for (const line of RECOMMENDED_NODE_LINES) expect(message).toContain(line);
    }
  });

  it('the machine running the tests satisfies engines, and `sigil version` runs on it', () => {
    expect(unsupportedNodeMessage(process.versions.node, engines)).toBeUndefined();
    const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'sigil.js'), 'version'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/\d+\.\d+\.\d+/);
  });

  const copies: string[] = [];
  afterAll(() => copies.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('a Node below engines gets one line naming the supported versions and exit 1, not a stack trace', () => {
    // The real entry point, in a copy whose package.json asks for a Node newer than this one.
    const dir = mkdtempSync(join(tmpdir(), 'sigil-engines-'));
    copies.push(dir);
    cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const major = Number(process.versions.node.split('.')[0]);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', engines: { node: `>=${major + 1}` } }));
    const r = spawnSync(process.execPath, [join(dir, 'bin', 'sigil.js'), 'version'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`sigil: Node.js ${process.versions.node} is not supported: Sigil needs Node.js >=${major + 1}`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
