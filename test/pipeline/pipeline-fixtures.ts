import type { PayloadOptions } from "../../src/records/rpc-record.js";
import { DEFAULT_POLICY_FILE } from "../../src/util/package-info.js";
import { loadPolicyFile } from "../../src/policy/load-config.js";
import { createPolicy } from "../../src/policy/create-policy.js";
import type { Policy } from "../../src/policy/policy.js";
import { MessagePipeline } from "../../src/pipeline/message-pipeline.js";

/** The production pipeline with its records collected in memory (no sink, no sockets). */
export function recordingPipeline(
  policy: Pick<Policy, "decide" | "judge" | "enforcing">,
  opts: { payloads: PayloadOptions; removeDeniedTools?: boolean; now?: () => number; maxPending?: number; maxSessions?: number; session?: (r: Record<string, unknown>) => Record<string, unknown> },
): { pipeline: MessagePipeline; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const pipeline = new MessagePipeline({
    policy,
    removeDeniedTools: opts.removeDeniedTools ?? true,
    payloads: opts.payloads,
    limits: { maxPending: opts.maxPending ?? 100, maxSessions: opts.maxSessions ?? 10 },
    ...(opts.now ? { now: opts.now } : {}),
    output: { rpc: (record) => records.push(record), session: (record) => records.push(opts.session ? opts.session(record) : record) },
  });
  return { pipeline, records };
}

/** The shipped policy, built by the production factory, with no pin store. */
export function shippedPolicy(now?: () => number): Policy {
  return createPolicy(loadPolicyFile(DEFAULT_POLICY_FILE), { pins: null, ...(now ? { now } : {}) });
}
