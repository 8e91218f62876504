import { defineConfig } from "vitest/config";

// `npm run test:deploy` (scripts/test-deploy.sh): container builds and runs, kept out of `npm test`.
// One file at a time: they share the machine's two cores and the image the first one builds.
export default defineConfig({
  test: {
    root: new URL("../../..", import.meta.url).pathname,
    include: ["test/deploy/containers/*.deploy.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 420_000,
    pool: "forks",
    globalSetup: ["test/deploy/containers/build-image.ts"],
  },
});
