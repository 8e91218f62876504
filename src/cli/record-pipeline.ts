import path from "node:path";
import type { LogSink } from "../log/logger.js";
import type { PayloadOptions } from "../log/rpc-record.js";
import { DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_PAYLOAD_MODE, type PayloadMode } from "../log/payload.js";
import { rpcRecord, sessionRecord } from "../log/rpc-record.js";
import { McpTracker } from "../mcp/tracker.js";
import type { PolicyConfig } from "../policy/config.js";
import { createPolicy } from "../policy/create-policy.js";
import { judgeReadings, settleEnforcement } from "../policy/enforcement.js";
import { loadPolicyFile } from "../policy/load-config.js";
import { PinStore } from "../policy/pin-store.js";
import type { Policy, PolicyDeps, PolicyWarn } from "../policy/policy.js";
import { DEFAULT_POLICY_FILE } from "./package-info.js";

/** Bounds on what the tracker remembers between messages. */
const MAX_PENDING_REQUESTS = 10_000;
const MAX_SESSIONS = 10_000;

export interface RecordPipeline {
  policyFile: string;
  policyConfig: PolicyConfig;
  policy: Policy;
  tracker: McpTracker;
}

/** The policy file named by --config, or the shipped one; a bad file throws a usage error. */
export function loadPolicy(
  config: string | undefined,
  pinsDir: string,
  warn?: PolicyWarn,
  shared?: Pick<PolicyDeps, "pins" | "rateLimiter"> | null,
): Omit<RecordPipeline, "tracker"> {
  const policyFile = path.resolve(config ?? DEFAULT_POLICY_FILE);
  const policyConfig = loadPolicyFile(policyFile);
  // With --state (src/state/): pins and rate-limit counters shared by replicas, behind the same interfaces.
  const policy = createPolicy(policyConfig, {
    pins: shared?.pins ?? new PinStore(path.join(pinsDir, "pins.json")),
    ...(shared?.rateLimiter ? { rateLimiter: shared.rateLimiter } : {}),
    ...(warn ? { warn } : {}),
  });
  return { policyFile, policyConfig, policy };
}

export function payloadOptions(o: { payloads?: PayloadMode; maxPayloadBytes?: number }): PayloadOptions {
  return { payloads: o.payloads ?? DEFAULT_PAYLOAD_MODE, maxPayloadBytes: o.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES };
}

/**
 * Every transport's messages go through one tracker: correlated, judged by the policy (its enforcement
 * settled), then written as `rpc` and `session` records.
 */
export function createTracker(policy: Policy, policyConfig: PolicyConfig, sink: LogSink, payloads: PayloadOptions): McpTracker {
  const log = sink.logger;
  return new McpTracker(
    {
      rpc: (e) => {
        const decision = judgeReadings(policy, e);
        e.decision = decision;
        settleEnforcement(e, decision, policyConfig.removeDeniedTools);
        const loud = e.kind === "invalid" || e.headerMismatch !== undefined || e.roundProblem !== undefined || decision.action !== "allow";
        const hidden = new Set<string>();
        const record = rpcRecord(e, payloads, hidden);
        // Secret members' values: removed by value from the exchange's (and session's) other records too.
        sink.secrets.add(e.flow, (record.session as string | null) ?? null, hidden);
        log[loud ? "warn" : "info"](record);
      },
      session: (r) => log.info(sessionRecord(r, payloads)),
    },
    { maxPending: MAX_PENDING_REQUESTS, maxSessions: MAX_SESSIONS },
  );
}
