// The layer rules of docs/design.md "Layers" kept by a test, not by review: every import of src/
// (static, `import type`, `export … from` and dynamic `import()`, read with the TypeScript compiler's
// own pre-processor) goes down the table below, never up, and no files import each other in a circle.
// The table is docs/design.md's, read as layers: a folder may import what its line names and what those
// may import in turn. Three lines name more than docs/design.md's do today, because the code rightly
// needs it and docs/design.md should say so: domain/ uses the policy language (policies are checked when
// stored) and auth/ (passkey and stamp verification); pipeline/ and activity/ write the audit log;
// activity/ runs the operations' declarations (it owns the lifecycle the pipeline used to run). errors/
// and config/ name nothing and sit under every line: an error code and the typed configuration are
// what every layer is allowed to know.
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** docs/design.md's layer table: each folder of src/ and the folders its line names. */
const LAYERS: Record<string, string[]> = {
  cli: ['*'],
  config: [],
  http: ['pipeline', 'operations'],
  pipeline: ['auth', 'policy', 'activity', 'operations', 'audit'],
  operations: ['domain', 'schemas'],
  schemas: [],
  domain: ['store', 'chains', 'crypto', 'barrier', 'delivery', 'policy', 'auth'],
  delivery: [],
  audit: ['crypto', 'store'],
  policy: [],
  auth: ['crypto', 'store'],
  activity: ['store', 'policy', 'operations', 'domain', 'audit'],
  barrier: ['crypto'],
  chains: ['crypto'],
  crypto: [],
  frames: [],
  store: [],
  errors: [],
};
/** Under every line. */
const FOUNDATION = ['errors', 'config'];

type Graph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.ts$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The src/ files `file` imports, as paths relative to src/ (JSON data files left out). */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const out: string[] = [];
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const target = resolve(dirname(file), fileName);
    if (target.endsWith('.json')) continue;
    const candidates = [target.replace(/\.js$/, '.ts'), `${target}.ts`, join(target, 'index.ts')];
    const found = candidates.find((c) => existsSync(c));
    if (!found) throw new Error(`${relative(SRC, file)} imports ${fileName}, which is not a file of src/`);
    out.push(relative(SRC, found));
  }
  return out;
}

function importGraph(): Graph {
  return new Map(sourceFiles(SRC).map((f) => [relative(SRC, f), importsOf(f)]));
}

const folderOf = (file: string) => file.split('/')[0];

/** The folders `folder` may import: its line, what those lines allow in turn, and the foundation. */
function allowed(folder: string): Set<string> {
  const seen = new Set<string>(FOUNDATION);
  const todo = [...(LAYERS[folder] ?? [])];
  while (todo.length) {
    const next = todo.pop()!;
    if (next === '*') return new Set(Object.keys(LAYERS));
    if (seen.has(next)) continue;
    seen.add(next);
    todo.push(...(LAYERS[next] ?? []));
  }
  return seen;
}

/** Every import that leaves its folder for one its line does not allow, said as "upward" when the
 * target's own line reaches back to the importer. */
function layerViolations(graph: Graph): string[] {
  const out: string[] = [];
  for (const [file, imports] of graph) {
    const from = folderOf(file);
    for (const target of imports) {
      const to = folderOf(target);
      if (to === from || allowed(from).has(to)) continue;
      const how = allowed(to).has(from) ? 'upward import' : `${from}/ does not name ${to}/`;
      out.push(`${how}: ${file} → ${target}`);
    }
  }
  return out.sort();
}

/** The import circles between files: one cycle per strongly connected component (Tarjan). */
function importCircles(graph: Graph): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const components: string[][] = [];
  const visit = (v: string) => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!));
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!order.has(v)) visit(v);
  return components.map((c) => cycleIn(graph, new Set(c)));
}

/** One circle through a component, from its first file back to it, for the failure message. */
function cycleIn(graph: Graph, component: Set<string>): string[] {
  const start = [...component].sort()[0];
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(previous.get(path[0])!);
        return [...path, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...component];
}

describe('layers (docs/design.md "Layers")', () => {
  const graph = importGraph();

  it('names every folder of src/ in the table', () => {
    const folders = [...new Set([...graph.keys()].map(folderOf))].filter((f) => !f.endsWith('.ts'));
    expect(folders.filter((f) => !(f in LAYERS))).toEqual([]);
  });

  it('no folder imports a folder its line does not name, upward or sideways', () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  it('no files import each other in a circle', () => {
    expect(importCircles(graph).map((c) => c.join(' → '))).toEqual([]);
  });

  // The scanner itself: a test that could not fail would keep nothing.
  it('the checks see an upward import, an unnamed folder and a circle', () => {
    const made: Graph = new Map([
      ['domain/a.ts', ['operations/b.ts', 'http/x.ts']],
      ['operations/b.ts', ['domain/a.ts']],
      ['http/x.ts', []],
      ['delivery/c.ts', ['store/d.ts']],
      ['store/d.ts', []],
    ]);
    expect(layerViolations(made)).toEqual([
      'delivery/ does not name store/: delivery/c.ts → store/d.ts',
      'upward import: domain/a.ts → http/x.ts',
      'upward import: domain/a.ts → operations/b.ts',
    ]);
    expect(importCircles(made)).toEqual([['domain/a.ts', 'operations/b.ts', 'domain/a.ts']]);
  });

  it('reads import type, export from and dynamic import', () => {
    const { importedFiles } = ts.preProcessFile(
      "import type { A } from './a.js';\nexport { B } from './b.js';\nexport * from './c.js';\nconst d = await import('./d.js');\n",
      true,
      true,
    );
    expect(importedFiles.map((f) => f.fileName)).toEqual(['./a.js', './b.js', './c.js', './d.js']);
  });
});
