/** Records of what the proxy refused, judged or passed through without decrypting. */
import { z } from "zod";
import { common, count } from "./common.js";

export const PolicyRecordSchema = z.strictObject({
  ...common("warn"),
  event: z.literal("policy"),
  stage: z.literal("connect"),
  server: z.string(),
  decision: z.strictObject({
    action: z.literal("deny"),
    enforced: z.boolean(),
    rules: z.array(z.strictObject({ name: z.string(), reason: z.string() })),
  }),
});
export type PolicyRecord = z.infer<typeof PolicyRecordSchema>;

export const RateLimitOverflowRecordSchema = z.strictObject({
  ...common("warn"),
  event: z.literal("rate_limit_overflow"),
  limit: z.string(),
  message: z.string(),
});
export type RateLimitOverflowRecord = z.infer<typeof RateLimitOverflowRecordSchema>;

const refused = {
  ...common("warn"),
  event: z.literal("refused"),
  client: z.string(),
  status: z.number().int(),
  reason: z.string(),
};

/** A refused CONNECT (bad or denied target, proxy credentials, a parser error) or a refused request. */
export const RefusedRecordSchema = z.discriminatedUnion("stage", [
  z.strictObject({ ...refused, stage: z.literal("connect"), target: z.string().optional(), server: z.string().optional() }),
  z.strictObject({
    ...refused,
    stage: z.literal("request"),
    server: z.string().nullable().optional(),
    method: z.string().optional(),
    host: z.string().nullable().optional(),
    requestLine: z.string().optional(),
  }),
]);
export type RefusedRecord = z.infer<typeof RefusedRecordSchema>;

export const ClientTlsErrorRecordSchema = z.strictObject({
  ...common("warn"),
  event: z.literal("client_tls_error"),
  tunnel: z.string(),
  server: z.string(),
  client: z.string(),
  err: z.string(),
  hint: z.string(),
});
export type ClientTlsErrorRecord = z.infer<typeof ClientTlsErrorRecordSchema>;

export const TunnelRecordSchema = z.strictObject({
  ...common("info"),
  event: z.literal("tunnel"),
  mode: z.literal("passthrough"),
  tunnel: z.string(),
  client: z.string(),
  server: z.string(),
  bytesUp: count,
  bytesDown: count,
  durationMs: z.number(),
  error: z.string().optional(),
});
export type TunnelRecord = z.infer<typeof TunnelRecordSchema>;
