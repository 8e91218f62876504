import type { PolicyConfig } from "./config.js";
import { detectors } from "./detectors/index.js";
import { Policy, type PolicyDeps } from "./policy.js";

/** A policy with the content detectors wired in. */
export function createPolicy(config: PolicyConfig, deps: Omit<PolicyDeps, "detectors">): Policy {
  return new Policy(config, { detectors, ...deps });
}
