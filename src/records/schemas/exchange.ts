/** Records of HTTP exchanges and what travelled in them: MCP messages and sessions, OAuth, WebSocket. */
import { z } from "zod";
import { common, count, DecisionSchema, nullableString, requestId, transport } from "./common.js";

export const HttpRecordSchema = z.strictObject({
  ...common("info", "warn"),
  event: z.literal("http"),
  flow: z.string(),
  mode: z.enum(["mitm", "plain-connect", "plain-proxy", "reverse"]),
  client: z.string(),
  server: z.string(),
  method: z.string(),
  path: z.string(),
  status: z.number().int().nullable(),
  statusSource: z.enum(["upstream", "proxy"]).nullable(),
  requestBytes: z.number().int().nonnegative(),
  responseBytes: z.number().int().nonnegative(),
  durationMs: z.number(),
  tls: z.strictObject({ client: nullableString, server: nullableString }).nullable(),
  httpVersion: z.string(),
  requestHeaders: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
  responseHeaders: z.record(z.string(), z.union([z.string(), z.array(z.string())])).nullable(),
  insecureUpstream: z.literal(true).optional(),
  error: z.strictObject({ code: z.string(), message: z.string(), tlsError: z.string().optional() }).optional(),
});
export type HttpRecord = z.infer<typeof HttpRecordSchema>;

export const RpcRecordSchema = z.strictObject({
  ...common("info", "warn"),
  event: z.literal("rpc"),
  flow: z.string(),
  transport,
  server: z.string(),
  client: z.string().optional(),
  path: z.string(),
  session: nullableString,
  protocolVersion: nullableString,
  direction: z.enum(["client_to_server", "server_to_client"]),
  kind: z.enum(["request", "notification", "response", "error", "invalid", "unanswered"]),
  id: requestId.nullable(),
  method: nullableString,
  tool: nullableString,
  bytes: z.number().int().nonnegative(),
  latencyMs: z.number().optional(),
  decision: DecisionSchema.optional(),
  argsHash: nullableString.optional(),
  argsHashError: z.string().optional(),
  related: z.strictObject({ id: requestId, method: z.string(), tool: z.string().optional(), elapsedMs: z.number() }).optional(),
  progressToken: requestId.nullable().optional(),
  reason: z.string().optional(),
  resultType: z.string().optional(),
  isError: z.literal(true).optional(),
  call: z.string().optional(),
  round: z.number().int().positive().optional(),
  roundProblem: z.string().optional(),
  task: z
    .strictObject({
      id: z.string(),
      status: z.string().optional(),
      created: z.literal(true).optional(),
      end: z.strictObject({ status: z.string(), callLatencyMs: z.number() }).optional(),
      final: z.literal(true).optional(),
      problem: z.string().optional(),
    })
    .optional(),
  apps: z.array(z.strictObject({ tool: z.string().optional(), uri: z.string(), sha256: z.string().optional(), bytes: z.number().int().nonnegative().optional() })).optional(),
  headerMismatch: z.array(z.strictObject({ header: z.string(), headerValue: nullableString, bodyValue: nullableString })).optional(),
  sseEventId: z.string().optional(),
  traceparent: z.string().optional(),
  tracestate: z.string().optional(),
  batch: z.strictObject({ index: z.number().int().nonnegative(), size: z.number().int().positive() }).optional(),
  insecureUpstream: z.literal(true).optional(),
  proxyAnswer: z.literal(true).optional(),
  readability: z.strictObject({ reason: z.string(), readings: z.number().int().positive() }).optional(),
  params: z.unknown().optional(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
  message: z.unknown().optional(),
});
export type RpcRecord = z.infer<typeof RpcRecordSchema>;

export const SessionRecordSchema = z.strictObject({
  ...common("info"),
  event: z.literal("session"),
  phase: z.enum(["start", "end"]),
  server: z.string(),
  session: z.string(),
  transport,
  protocolVersion: nullableString,
  flow: z.string().optional(),
  clientInfo: z.unknown().optional(),
  serverInfo: z.unknown().optional(),
  capabilities: z.strictObject({ client: z.unknown(), server: z.unknown() }).optional(),
  instructionsBytes: z.number().int().nonnegative().optional(),
  reason: z.string().optional(),
  durationMs: z.number().optional(),
  messages: z.number().int().nonnegative().optional(),
});
export type SessionRecordLine = z.infer<typeof SessionRecordSchema>;

export const WebsocketRecordSchema = z.strictObject({
  ...common("info"),
  event: z.literal("websocket"),
  flow: z.string(),
  client: z.string(),
  server: z.string(),
  path: z.string(),
  status: z.literal(101),
  bytesUp: count,
  bytesDown: count,
  durationMs: z.number(),
  error: z.string().optional(),
});
export type WebsocketRecord = z.infer<typeof WebsocketRecordSchema>;
