// `npm test`: builds, runs the whole suite on the embedded SQLite store, then runs the store-backed
// suites (test/e2e) again on PostgreSQL. PostgreSQL is SIGIL_TEST_DATABASE_URL or the local
// postgres://postgres@127.0.0.1:5432/test; when it is unreachable the PostgreSQL pass is skipped
// with a notice on a developer machine and fails under CI (CI=true), where it must run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';

const PG_URL = process.env.SIGIL_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const extraArgs = process.argv.slice(2);
const out = mkdtempSync(join(tmpdir(), 'sigil-vitest-'));
const totals = { passed: 0, failed: 0, skipped: 0 };
// Every failed test by pass, file and name: printed again at the very end, because CI keeps only the
// tail of a long run and the failure itself scrolls away under later passes.
const failures = [];

function run(label, args, env) {
  process.stdout.write(`\n=== ${label} ===\n`);
  const file = join(out, `${label.replace(/\W+/g, '-')}.json`);
  const r = spawnSync('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${file}`, ...args], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  try {
    const j = JSON.parse(readFileSync(file, 'utf8'));
    totals.passed += j.numPassedTests;
    totals.failed += j.numFailedTests;
    totals.skipped += j.numPendingTests + j.numTodoTests;
    if (j.numTotalTests === 0) totals.failed += 1; // a pass that ran nothing is a failure
    for (const file of j.testResults ?? []) {
      const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
      for (const t of failed) failures.push(`${label}: ${relative(process.cwd(), file.name)} > ${t.fullName}`);
      // A file that failed outside any test (its setup, an unhandled error) has no failed assertion.
      if (failed.length === 0 && file.status === 'failed') failures.push(`${label}: ${relative(process.cwd(), file.name)}: ${String(file.message ?? '').split('\n')[0]}`);
    }
  } catch {
    totals.failed += 1; // the runner died before writing results
  }
  return r.status === 0;
}

async function postgresReachable() {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (err) {
    process.stdout.write(`PostgreSQL at ${PG_URL} is unreachable: ${err.message}\n`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

let ok = run('all tests on SQLite', extraArgs, { SIGIL_TEST_DATABASE_URL: '' });
if (await postgresReachable()) {
  ok = run('store-backed tests on PostgreSQL', ['test/e2e', ...extraArgs], { SIGIL_TEST_DATABASE_URL: PG_URL }) && ok;
} else if (process.env.CI) {
  process.stdout.write('CI requires PostgreSQL: failing.\n');
  ok = false;
  totals.failed += 1;
} else {
  process.stdout.write('Skipping the PostgreSQL pass (start PostgreSQL or set SIGIL_TEST_DATABASE_URL to run it).\n');
}
rmSync(out, { recursive: true, force: true });
if (failures.length) process.stdout.write(`\nfailed:\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
process.stdout.write(`\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
process.exit(ok && totals.failed === 0 ? 0 : 1);
