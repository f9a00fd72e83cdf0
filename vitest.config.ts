import { defineConfig } from 'vitest/config';

// Two projects: `unit` (test/unit: no addon, no build needed — `npm run test:unit`) and
// `integration` (everything that loads the addon, the CLI or the Python tools). `vitest run`
// runs both.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'integration', include: ['test/{integration,cli,robustness,property}/**/*.test.ts'] } },
    ],
  },
});
