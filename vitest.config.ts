// Test runner settings. End-to-end files each start their own `sigil serve` on ephemeral ports,
// against SQLite by default or PostgreSQL when SIGIL_TEST_DATABASE_URL is set (see .ci/run).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
