/**
 * The record contract (docs/log-format.md), one zod schema per record type with its inferred type, in the
 * style of the MCP SDK (`XxxRecordSchema` + `XxxRecord`). Strict: a field the docs do not name fails the
 * schema tests, which parse real records and compare these shapes with the docs' tables.
 */
import { z } from "zod";

/** Fields every record has (pino's, and the audit chain's with `--audit-chain`). */
const common = {
  level: z.enum(["debug", "info", "warn", "error"]),
  time: z.string(),
  msg: z.string().optional(),
  seq: z.number().int().nonnegative().optional(),
  prevHash: z.string().optional(),
  mac: z.string().optional(),
};

export const COMMON_FIELDS: readonly string[] = Object.keys(common);

const nullableString = z.string().nullable();
const transport = z.enum(["streamable-http", "http+sse", "stdio"]);

export const DecisionSchema = z.strictObject({
  action: z.enum(["allow", "deny", "flag"]),
  enforced: z.boolean(),
  rules: z.array(
    z.strictObject({
      name: z.string(),
      action: z.enum(["allow", "deny", "flag"]),
      reason: z.string().optional(),
      findings: z.array(z.strictObject({ type: z.string(), path: z.string(), detail: z.string().optional(), detector: z.string().optional() })).optional(),
    }),
  ),
  effect: z.string().optional(),
});

export const StartRecordSchema = z.strictObject({
  ...common,
  event: z.literal("start"),
  version: z.string(),
  listen: z.string(),
  caCert: z.string(),
  caCreated: z.boolean(),
  insecureUpstream: z.boolean(),
  passthrough: z.array(z.string()),
  policy: z.strictObject({ file: z.string(), mode: z.enum(["monitor", "enforce"]) }),
  reverse: z.array(z.string()),
  keylog: z.string().optional(),
});
export type StartRecord = z.infer<typeof StartRecordSchema>;

/** `mcp-wiretap stdio`: the launch (docs/log-format.md, stdio launches). */
export const StdioStartRecordSchema = z.strictObject({
  ...common,
  event: z.literal("start"),
  version: z.string(),
  transport: z.literal("stdio"),
  server: z.string(),
  session: z.string(),
  command: z.array(z.string()),
  pid: z.number().int().optional(),
  policy: z.strictObject({ file: z.string(), mode: z.enum(["monitor", "enforce"]) }),
  log: z.string(),
});
export type StdioStartRecord = z.infer<typeof StdioStartRecordSchema>;

export const HttpRecordSchema = z.strictObject({
  ...common,
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

const requestId = z.union([z.string(), z.number()]);

export const RpcRecordSchema = z.strictObject({
  ...common,
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
  headerMismatch: z.array(z.strictObject({ header: z.string(), headerValue: nullableString, bodyValue: nullableString })).optional(),
  sseEventId: z.string().optional(),
  traceparent: z.string().optional(),
  tracestate: z.string().optional(),
  batch: z.strictObject({ index: z.number().int().nonnegative(), size: z.number().int().positive() }).optional(),
  insecureUpstream: z.literal(true).optional(),
  readability: z.strictObject({ reason: z.string(), readings: z.number().int().positive() }).optional(),
  params: z.unknown().optional(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
  message: z.unknown().optional(),
});
export type RpcRecord = z.infer<typeof RpcRecordSchema>;

export const SessionRecordSchema = z.strictObject({
  ...common,
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

export const StopRecordSchema = z.strictObject({
  ...common,
  event: z.literal("stop"),
  reason: z.string(),
  droppedRecords: z.number().int().positive().optional(),
  // `mcp-wiretap stdio` (docs/log-format.md, stdio launches): the launch and how it ended.
  server: z.string().optional(),
  session: z.string().optional(),
  exitCode: z.number().int().optional(),
});
export type StopRecord = z.infer<typeof StopRecordSchema>;

/** Schemas by `event`; records of other types are described in docs/log-format.md only, for now. */
export const RECORD_SCHEMAS = {
  start: z.union([StartRecordSchema, StdioStartRecordSchema]),
  stop: StopRecordSchema,
  http: HttpRecordSchema,
  rpc: RpcRecordSchema,
  session: SessionRecordSchema,
} as const;

export type SchemaRecordType = keyof typeof RECORD_SCHEMAS;
