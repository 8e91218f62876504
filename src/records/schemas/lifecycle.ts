/** Records of the proxy's own life: start, stop, and the warnings about its setup and its outputs. */
import { z } from "zod";
import { common, count, policyInUse } from "./common.js";

export const StartRecordSchema = z.strictObject({
  ...common("info"),
  event: z.literal("start"),
  version: z.string(),
  listen: z.string(),
  caCert: z.string(),
  caCreated: z.boolean(),
  insecureUpstream: z.boolean(),
  passthrough: z.array(z.string()),
  policy: policyInUse,
  reverse: z.array(z.string()),
  keylog: z.string().optional(),
});
export type StartRecord = z.infer<typeof StartRecordSchema>;

export const StopRecordSchema = z.strictObject({
  ...common("info"),
  event: z.literal("stop"),
  reason: z.string(),
  droppedRecords: z.number().int().positive().optional(),
  // `mcp-wiretap stdio` (docs/log-format.md, stdio launches): the launch and how it ended.
  server: z.string().optional(),
  session: z.string().optional(),
  exitCode: z.number().int().optional(),
});
export type StopRecord = z.infer<typeof StopRecordSchema>;

export const InsecureUpstreamRecordSchema = z.strictObject({
  ...common("warn"),
  event: z.literal("insecure_upstream"),
  message: z.string(),
});
export type InsecureUpstreamRecord = z.infer<typeof InsecureUpstreamRecordSchema>;

export const CaWarningRecordSchema = z.strictObject({
  ...common("warn"),
  event: z.literal("ca_warning"),
  message: z.string(),
});
export type CaWarningRecord = z.infer<typeof CaWarningRecordSchema>;

export const StateUnavailableRecordSchema = z.strictObject({
  ...common("warn"),
  event: z.literal("state_unavailable"),
  state: z.string(),
  message: z.string(),
});
export type StateUnavailableRecord = z.infer<typeof StateUnavailableRecordSchema>;

export const OtlpExportRecordSchema = z.strictObject({
  ...common("warn"),
  event: z.literal("otlp_export"),
  endpoint: z.string(),
  spans: count,
  exported: count,
  failed: count,
  dropped: count,
  message: z.string(),
});
export type OtlpExportRecord = z.infer<typeof OtlpExportRecordSchema>;

export const RecordStreamDropsRecordSchema = z.strictObject({
  ...common("warn"),
  event: z.literal("record_stream_drops"),
  subscriber: z.string(),
  dropped: count,
  errors: count,
});
export type RecordStreamDropsRecord = z.infer<typeof RecordStreamDropsRecordSchema>;

/** A bounded table of the proxy let entries go (src/bounds/evictions.ts). */
export const TableEvictedRecordSchema = z.strictObject({
  ...common("warn"),
  event: z.literal("table_evicted"),
  table: z.enum(["pending", "given_up", "sessions", "legacy_endpoints", "multi_round", "tool_catalog", "ui_feeds"]),
  reason: z.enum(["entries", "bytes", "per_client", "per_server", "per_stream", "stalled"]),
  evicted: count,
  bytes: count,
  maxEntries: count,
  maxBytes: count,
  peer: z.string().optional(),
  message: z.string(),
});
export type TableEvictedRecord = z.infer<typeof TableEvictedRecordSchema>;

/** A decoder of the proxy threw (forwarding is not affected). */
export const AddonErrorRecordSchema = z.strictObject({
  ...common("error"),
  event: z.literal("addon_error"),
  addon: z.string(),
  hook: z.string(),
  flow: z.string().optional(),
  err: z.string(),
});
export type AddonErrorRecord = z.infer<typeof AddonErrorRecordSchema>;

/** Written at `debug`, below the fixed `info` level: listed for completeness. */
export const EngineErrorRecordSchema = z.strictObject({
  ...common("debug"),
  event: z.literal("engine_error"),
  kind: z.string(),
  err: z.string(),
});
export type EngineErrorRecord = z.infer<typeof EngineErrorRecordSchema>;
