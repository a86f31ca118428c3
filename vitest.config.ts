import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests run the verifier package from its source: no build needed, and the package test's
  // rebuild of packages/verify/dist cannot pull it from under them.
  resolve: {
    alias: { '@canvass/verify': fileURLToPath(new URL('packages/verify/src/index.ts', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.test.ts'],
    // With two files at once, a test that starts `canvass` a few times took up to 26 s here.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at once, also on two cores (vitest's default would be one there): most of a
    // file's time is its process starting, its database opening and its processes waiting on
    // ladders and deadlines, not CPU. Tests wait on conditions, not on the machine's speed.
    maxWorkers: 2,
    // Each of the two processes keeps its loaded modules from one file to the next instead of
    // loading them again (PGlite's WASM, Fastify, the app): the PGlite pass took 394 s against
    // 533 s isolated (2026-11-28, 2-core AMD EPYC, one after the other). Tests share no module
    // state: each builds its own app, store and clock.
    isolate: false,
    globalSetup: ['test/support/global-setup.ts'],
  },
});
