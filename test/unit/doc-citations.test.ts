// Every document a source comment cites is a file of this repository (docs/reference/README.md says why):
// a `*.md` path in a comment of src/ must exist, a section named right after it (`docs/keys.md "Signing"`)
// must be a heading or a bold lead-in of that file, `README "Section"` must be a heading of README.md, and
// comments give reasons or cite docs, never issue numbers.
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/** Documents of other projects cited by name, with the project that holds them. */
const EXTERNAL = new Set(['slip-0010.md' /* satoshilabs/slips, the SLIP-10 derivation text */]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.(ts|tsx|mts|js|mjs|html|css|json)$/.test(e.name) ? [p] : [];
  });
}

/** The comments of a file as blocks of text, each with the line it starts on (wrapped citations stay whole). */
function commentBlocks(text: string): { line: number; text: string }[] {
  const blocks: { line: number; text: string }[] = [];
  let current: { line: number; text: string } | undefined;
  text.split('\n').forEach((raw, i) => {
    const m = /^\s*(?:\/\/+|\/\*+|\*(?!\/)|<!--)(.*)$/.exec(raw);
    if (!m) {
      current = undefined;
      return;
    }
    const body = m[1]!.replace(/\*\/\s*$|-->\s*$/, '').trim();
    if (current) current.text += ' ' + body;
    else blocks.push((current = { line: i + 1, text: body }));
  });
  return blocks;
}

/** Headings and bold lead-ins of a markdown file, as plain text (no backticks). */
function sectionsOf(file: string): string[] {
  const plain = (s: string) => s.replace(/`/g, '').trim();
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((l) => {
      const h = /^#{1,6} (.*)$/.exec(l);
      if (h) return [plain(h[1]!)];
      const b = /^\*\*(.+?)\*\*/.exec(l);
      return b ? [plain(b[1]!).replace(/\.$/, '')] : [];
    });
}

const hasSection = (file: string, name: string) => {
  const wanted = name.replace(/`/g, '');
  return sectionsOf(file).some((s) => s === wanted || s.startsWith(wanted));
};

const files = sourceFiles(join(root, 'src'));
const blocks = files.flatMap((f) => commentBlocks(readFileSync(f, 'utf8')).map((b) => ({ ...b, where: `${relative(root, f)}:${b.line}` })));

describe('citations in source comments', () => {
  it('finds comments to check', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(blocks.some((b) => b.text.includes('docs/reference/'))).toBe(true);
  });

  it('cites only documents of this repository, and sections they have', () => {
    const problems: string[] = [];
    for (const b of blocks) {
      for (const m of b.text.matchAll(/([\w./-]*[\w-]\.mdx?)\b(?:,? "([^"]+)")?/g)) {
        const [, path, section] = m;
        if (EXTERNAL.has(path!)) continue;
        const file = join(root, path!);
        if (!path!.endsWith('.md') || !existsSync(file)) {
          problems.push(`${b.where}: ${path} is not a file of the repository`);
          continue;
        }
        if (section !== undefined && !hasSection(file, section)) problems.push(`${b.where}: ${path} has no section "${section}"`);
      }
      for (const m of b.text.matchAll(/\bREADME,? "([^"]+)"/g)) {
        if (!hasSection(join(root, 'README.md'), m[1]!)) problems.push(`${b.where}: README.md has no section "${m[1]}"`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('gives reasons or docs rather than issue numbers', () => {
    const problems = files.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((l, i) => (/\bissues? #?\d+/i.test(l) ? [`${relative(root, f)}:${i + 1}: ${l.trim()}`] : [])),
    );
    expect(problems).toEqual([]);
  });

  it('would notice a missing document, a missing section and an issue number', () => {
    const [block] = commentBlocks('// see docs/nowhere.md and docs/design.md "No such part" (issue 12)');
    expect(block!.text).toContain('docs/nowhere.md');
    expect(existsSync(join(root, 'docs/nowhere.md'))).toBe(false);
    expect(hasSection(join(root, 'docs/design.md'), 'No such part')).toBe(false);
    expect(hasSection(join(root, 'docs/design.md'), 'Security model')).toBe(true);
  });
});
