import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // The second prints how many tests were skipped, and why.
    reporters: ["default", "./test/helpers/skip-summary-reporter.ts"],
  },
});
