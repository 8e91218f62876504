import path from "node:path";
import type { LogSink } from "../log/logger.js";
import type { PayloadOptions } from "../records/rpc-record.js";
import { DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_PAYLOAD_MODE, type PayloadMode } from "../log/payload.js";
import type { PolicyConfig, PolicyMode } from "../policy/config.js";
import { createPolicy } from "../policy/create-policy.js";
import { readPolicyConfig } from "../policy/checked-policy.js";
import { PinStore } from "../policy/pin-store.js";
import type { ContentDetectors, Policy, PolicyDeps, PolicyWarn } from "../policy/policy.js";
import { MessagePipeline } from "./message-pipeline.js";
import type { WaitingBudget } from "../budget/waiting-budget.js";
import { recordErrorRecord } from "../records/lifecycle-records.js";
import { CHECKED_POLICY_FILE, DEFAULT_POLICY_FILE } from "../util/package-info.js";

/** Bounds on what the tracker remembers between messages. */
const MAX_PENDING_REQUESTS = 10_000;
const MAX_SESSIONS = 10_000;

export interface RecordPipeline {
  policyFile: string;
  policyConfig: PolicyConfig;
  policy: Policy;
}

/** The policy file named by --config, or the shipped one; a bad file throws a usage error. */
export async function loadPolicy(
  config: string | undefined,
  pinsDir: string,
  warn?: PolicyWarn,
  shared?: Partial<Pick<PolicyDeps, "pins" | "rateLimiter" | "slicedScans">> | null,
  detectors?: ContentDetectors,
  mode?: PolicyMode,
): Promise<RecordPipeline> {
  const policyFile = path.resolve(config ?? DEFAULT_POLICY_FILE);
  const loaded = await readPolicyConfig(policyFile, CHECKED_POLICY_FILE);
  // --mode overrides the file's `mode:` (the banner says which one is in force and where it came from).
  const policyConfig = mode ? { ...loaded, mode } : loaded;
  // With --state (src/state/): pins and rate-limit counters shared by replicas, behind the same interfaces.
  const policy = createPolicy(policyConfig, {
    pins: shared?.pins ?? new PinStore(path.join(pinsDir, "pins.json")),
    ...(shared?.rateLimiter ? { rateLimiter: shared.rateLimiter } : {}),
    ...(shared?.slicedScans ? { slicedScans: true } : {}),
    ...(warn ? { warn } : {}),
    ...(detectors ? { detectors } : {}),
  });
  return { policyFile, policyConfig, policy };
}

export function payloadOptions(o: { payloads?: PayloadMode; maxPayloadBytes?: number }): PayloadOptions {
  return { payloads: o.payloads ?? DEFAULT_PAYLOAD_MODE, maxPayloadBytes: o.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES };
}

/**
 * Every transport's messages go through one pipeline: correlated, judged by the policy (its enforcement
 * settled), then written as `rpc` and `session` records.
 */
export function createMessagePipeline(policy: Pick<Policy, "decide" | "judge" | "enforcing">, policyConfig: Pick<PolicyConfig, "removeDeniedTools" | "detectors">, sink: Pick<LogSink, "logger" | "secrets">, payloads: PayloadOptions, waiting?: WaitingBudget): MessagePipeline {
  const log = sink.logger;
  return new MessagePipeline({
    policy,
    ...(waiting ? { waiting } : {}),
    removeDeniedTools: policyConfig.removeDeniedTools,
    // Without the policy's secrets detector, the records scan payloads themselves.
    payloads: { ...payloads, scanSecrets: policyConfig.detectors.secrets === "off" },
    limits: { maxPending: MAX_PENDING_REQUESTS, maxSessions: MAX_SESSIONS },
    output: {
      rpc: (record, loud, hidden, e) => {
        // Secret members' values: removed by value from the exchange's (and session's) other records too.
        sink.secrets.add(e.flow, (record.session as string | null) ?? null, hidden);
        log[loud ? "warn" : "info"](record);
      },
      session: (record) => log.info(record),
      evicted: (record) => log.warn(record),
      failed: (err, e) => log.error(recordErrorRecord(e.flow, err)),
      // The exchange's `http` record waits until the credentials this message's record hides are known.
      waiting: (e, written) => sink.secrets.willLearn(e.flow, written.then(() => [])),
    },
  });
}
