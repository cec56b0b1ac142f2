// Every document a comment cites is a file of this repository (docs/reference/README.md says why): a
// `*.md` path in a comment must exist, a section named right after it (`docs/reference/keys.md
// Signing` in quotes) must be a heading or a bold lead-in of that file, a README section named in quotes
// must be a heading of README.md, no outside reference document is cited by its short name and a section
// number, and comments give reasons or cite docs, never issue numbers. It reads src/ and the code around
// it: test/, scripts/, bench/, dashboard/ and .ci/ (their comments, and the prose fields of their JSON
// data, such as a corpus's "source").
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/** The folders whose comments are checked. */
const FOLDERS = ['src', 'test', 'scripts', 'bench', 'dashboard', '.ci'];

/** Documents of other projects cited by name, with the project that holds them. */
const EXTERNAL = new Set(['slip-0010.md' /* satoshilabs/slips, the SLIP-10 derivation text */]);

/**
 * Pages of Turnkey's public documentation (tkhq/docs, `.mdx`) and the tkhq/sdk examples (`examples/…/README.md`):
 * the policy corpora transcribe the examples they publish and name the page each case comes from. Only
 * those data files may name them; comments cite this repository's docs/reference/ instead.
 */
const TRANSCRIBED = /^test\/policy\/(corpus|engine)\/[\w-]+\.json$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : sourceFiles(p);
    // Extensionless files are shell scripts (.ci/run).
    return /\.(ts|tsx|mts|js|mjs|html|css|json)$/.test(e.name) || !e.name.includes('.') ? [p] : [];
  });
}

/**
 * The comments of a file as blocks of text, each with the line it starts on (wrapped citations stay
 * whole). A JSON file has no comments: each line is a block, so its prose fields ("source", "origin",
 * "why", ...) are read like comments. A shell script's comments start with `#`.
 */
function commentBlocks(text: string, kind: 'code' | 'json' | 'shell' = 'code'): { line: number; text: string }[] {
  const blocks: { line: number; text: string }[] = [];
  let current: { line: number; text: string } | undefined;
  const comment = kind === 'shell' ? /^\s*#(?!!)(.*)$/ : /^\s*(?:\/\/+|\/\*+|\*(?!\/)|<!--)(.*)$/;
  text.split('\n').forEach((raw, i) => {
    if (kind === 'json') {
      blocks.push({ line: i + 1, text: raw.trim() });
      return;
    }
    const m = comment.exec(raw);
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

const kindOf = (file: string) => (file.endsWith('.json') ? 'json' : basename(file).includes('.') ? 'code' : 'shell');

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

const files = FOLDERS.flatMap((d) => sourceFiles(join(root, d)));
const blocks = files.flatMap((f) =>
  commentBlocks(readFileSync(f, 'utf8'), kindOf(f)).map((b) => ({ ...b, file: relative(root, f), where: `${relative(root, f)}:${b.line}` })),
);

/** An issue number, as a tracker spells it: the word, an optional space and `#`, then digits. */
const ISSUE = /\bissues? ?#?\d+/i;

/** What is wrong with the citations of one block of `file` (a path relative to the repository). */
function problemsOf(file: string, text: string): string[] {
  const problems: string[] = [];
  // A web address names its own site; only bare paths are documents to look up here.
  const prose = text.replace(/\b(?:https?:\/\/|github\.com\/)\S+/g, '');
  for (const m of prose.matchAll(/([\w./-]*[\w-]\.mdx?)\b(?:,? "([^"]+)")?/g)) {
    const [, path, section] = m;
    if (EXTERNAL.has(path!)) continue;
    if (TRANSCRIBED.test(file) && (path!.endsWith('.mdx') || path!.startsWith('examples/'))) continue;
    const doc = join(root, path!);
    if (!path!.endsWith('.md') || !existsSync(doc)) {
      problems.push(`${path} is not a file of the repository`);
      continue;
    }
    if (section !== undefined && !hasSection(doc, section)) problems.push(`${path} has no section "${section}"`);
  }
  for (const m of prose.matchAll(/\bREADME,? "([^"]+)"/g)) {
    if (!hasSection(join(root, 'README.md'), m[1]!)) problems.push(`README.md has no section "${m[1]}"`);
  }
  // The reference documents outside the repository were also cited by a short name and a section number.
  for (const m of prose.matchAll(/\b((?:turnkey-)?(?:semantics|contract)|interface-spec) ?§/g)) problems.push(`${m[1]} § is a document outside the repository`);
  return problems;
}

describe('citations in comments', () => {
  it('finds comments to check in every folder', () => {
    expect(files.length).toBeGreaterThan(300);
    for (const folder of FOLDERS) expect(blocks.some((b) => b.file.startsWith(`${folder}/`)), folder).toBe(true);
    expect(blocks.some((b) => b.text.includes('docs/reference/'))).toBe(true);
  });

  it('cites only documents of this repository, and sections they have', () => {
    const problems = blocks.flatMap((b) => problemsOf(b.file, b.text).map((p) => `${b.where}: ${p}`));
    expect(problems).toEqual([]);
  });

  it('gives reasons or docs rather than issue numbers', () => {
    const problems = files.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((l, i) => (ISSUE.test(l) ? [`${relative(root, f)}:${i + 1}: ${l.trim()}`] : [])),
    );
    expect(problems).toEqual([]);
  });

  it('would notice a missing document, a missing section, a README section, an outside document and an issue number', () => {
    // Built from parts so that this file does not hold the issue number it shows.
    const [block] = commentBlocks(['// see docs/nowhere.md and docs/design.md "No such part" (issue', '12)'].join(' '));
    expect(problemsOf('test/unit/x.test.ts', block!.text)).toEqual(['docs/nowhere.md is not a file of the repository', 'docs/design.md has no section "No such part"']);
    expect(ISSUE.test(block!.text)).toBe(true);
    expect(problemsOf('test/unit/x.test.ts', 'docs/design.md "Security model"')).toEqual([]);
    expect(problemsOf('bench/x.mjs', 'README "Broadcasting"; turnkey-contract.md §1.3; DESIGN.md')).toEqual([
      'turnkey-contract.md is not a file of the repository',
      'DESIGN.md is not a file of the repository',
      'README.md has no section "Broadcasting"',
    ]);
    expect(problemsOf('test/unit/x.test.ts', 'features/secrets.mdx')).toEqual(['features/secrets.mdx is not a file of the repository']);
    expect(problemsOf('src/x.ts', '(semantics §7; contract §1.5)')).toEqual([
      'semantics § is a document outside the repository',
      'contract § is a document outside the repository',
    ]);
    expect(problemsOf('test/policy/corpus/x.json', '"origin": "features/secrets.mdx"')).toEqual([]);
    expect(problemsOf('test/vectors/x.json', 'https://github.com/stellar/stellar-protocol/blob/master/ecosystem/sep-0005.md')).toEqual([]);
    const [shell] = commentBlocks('#!/usr/bin/env bash\n# see docs/limits.md "Limits"', 'shell');
    expect(shell).toEqual({ line: 2, text: 'see docs/limits.md "Limits"' });
  });
});
