import type { PolicyConfig } from "./config.js";
import { detectors } from "../detectors/index.js";
import { Policy, type ContentDetectors, type PolicyDeps } from "./policy.js";

/** A policy with the content detectors wired in (`detectors` replaces them, to prove how a failing one is handled). */
export function createPolicy(config: PolicyConfig, deps: Omit<PolicyDeps, "detectors"> & { detectors?: ContentDetectors }): Policy {
  return new Policy(config, { ...deps, detectors: deps.detectors ?? detectors });
}
