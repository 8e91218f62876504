import { defineConfig } from "vitest/config";
export default defineConfig({
  root: "/work/main",
  test: { include: [".scratch-docs/**/*.test.ts"], testTimeout: 120_000, hookTimeout: 60_000, pool: "forks" },
});
