import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["e2e/**/*.test.ts", "scenarios/**/*.test.ts", "connectors/**/*.test.ts"],
    // Each file starts real processes (Redis, Prometheus, API, workers): one file at a time on 2 cores.
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 60_000,
  },
});
