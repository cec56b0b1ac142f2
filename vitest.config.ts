// Test runner settings. End-to-end files each start their own Sigil on ephemeral ports (in the test
// process unless a file asks for a real `sigil serve`: test/helpers/sigil.ts), against SQLite by
// default or PostgreSQL when SIGIL_TEST_DATABASE_URL is set (see .ci/run).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const dist = fileURLToPath(new URL('./dist/', import.meta.url)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
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
