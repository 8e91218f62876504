import type { PolicyConfig } from "./config.js";
import { detectors } from "./detectors/index.js";
import type { PinStore } from "./pin-store.js";
import { Policy, type PolicyWarn } from "./policy.js";

/** A policy with the content detectors wired in. */
export function createPolicy(config: PolicyConfig, deps: { pins: PinStore | null; now?: () => number; warn?: PolicyWarn }): Policy {
  return new Policy(config, { detectors, pins: deps.pins, ...(deps.now ? { now: deps.now } : {}), ...(deps.warn ? { warn: deps.warn } : {}) });
}
