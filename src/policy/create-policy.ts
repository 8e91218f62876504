import type { PolicyConfig } from "./config.js";
import { detectors } from "./detectors/index.js";
import type { PinStore } from "./pin-store.js";
import { Policy, type ContentDetectors, type PolicyWarn } from "./policy.js";

/** A policy with the content detectors wired in (`detectors` replaces them, to prove how a failing one is handled). */
export function createPolicy(config: PolicyConfig, deps: { pins: PinStore | null; now?: () => number; warn?: PolicyWarn; detectors?: ContentDetectors }): Policy {
  return new Policy(config, { detectors: deps.detectors ?? detectors, pins: deps.pins, ...(deps.now ? { now: deps.now } : {}), ...(deps.warn ? { warn: deps.warn } : {}) });
}
