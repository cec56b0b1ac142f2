// Test runner settings. End-to-end files each start their own Sigil on ephemeral ports (in the test
// process unless a file asks for a real `sigil serve`: test/helpers/sigil.ts), against SQLite by
// default or PostgreSQL when SIGIL_TEST_DATABASE_URL is set (see .ci/run).
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const dist = fileURLToPath(new URL('./dist/', import.meta.url)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // At least two files at once. Vitest's default (one fork fewer than the cores) runs a 2-core CI
    // machine's suite one file at a time, and most files spend much of their time waiting: on a
    // `sigil serve` child, Chromium, anvil, SMTP or PostgreSQL. Measured on 2 cores: SQLite pass
    // 775 s with one fork, 430 s with two, with the same results. Every file makes its own data
    // directory, PostgreSQL schema, clusters and ports, so files do not share state.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    minWorkers: 1,
    reporters: ['default'],
    server: {
      deps: {
        // The compiled tree an in-process Sigil runs is loaded by Node itself, as `sigil serve` loads
        // it: not transformed again, and with the precompiled request validators of the build.
        external: [new RegExp(`^${dist}`)],
      },
    },
  },
});
