/**
 * Global setup of `npm run test:deploy`: builds the shipped Dockerfile as it is, once, into IMAGE. Bases
 * are local (scripts/deploy/base-images.sh); `--pull=never` makes a missing one fail at once instead of
 * slowly trying a registry; `--format docker` keeps the HEALTHCHECK (the OCI format drops it); the host's
 * npm cache is lent to `npm ci` as a throw-away overlay (BUILD_ARGS).
 */
import { BUILD_ARGS, exec, IMAGE } from "./podman.js";

export default async function buildImage(): Promise<void> {
  // While working on the tests themselves: MCP_WIRETAP_DEPLOY_REUSE_IMAGE=1 runs them on the image as built last.
  if (process.env.MCP_WIRETAP_DEPLOY_REUSE_IMAGE === "1" && (await exec("podman", ["image", "exists", IMAGE]).then(() => true, () => false))) return;
  const root = new URL("../../..", import.meta.url).pathname;
  const t0 = Date.now();
  await exec("podman", ["build", ...BUILD_ARGS, "--quiet", "-t", IMAGE, "-f", "Dockerfile", "."], { cwd: root, timeoutMs: 480_000 });
  console.log(`test:deploy: built ${IMAGE} from the shipped Dockerfile in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
