/**
 * The record contract (docs/log-format.md), one zod schema per record type with its inferred type, in the
 * style of the MCP SDK (`XxxRecordSchema` + `XxxRecord`). Strict: a field the docs do not name fails. The
 * schema tests parse real records with them and compare their fields with the docs' tables.
 */
import { z } from "zod";
import { AuthRecordSchema } from "./auth.js";
import { HttpRecordSchema, RpcRecordSchema, SessionRecordSchema, WebsocketRecordSchema } from "./exchange.js";
import {
  AddonErrorRecordSchema,
  CaWarningRecordSchema,
  EngineErrorRecordSchema,
  InsecureUpstreamRecordSchema,
  OtlpExportRecordSchema,
  RecordStreamDropsRecordSchema,
  StartRecordSchema,
  StateUnavailableRecordSchema,
  StopRecordSchema,
  TableEvictedRecordSchema,
} from "./lifecycle.js";
import { InterceptRecordSchema } from "./intercept.js";
import { ClientTlsErrorRecordSchema, PolicyRecordSchema, RateLimitOverflowRecordSchema, RefusedRecordSchema, TunnelRecordSchema } from "./security.js";
import { SpawnErrorRecordSchema, StderrRecordSchema, StdioAddonErrorRecordSchema, StdioStartRecordSchema, UiErrorRecordSchema } from "./stdio.js";

export * from "./auth.js";
export { COMMON_FIELDS, DecisionSchema } from "./common.js";
export * from "./exchange.js";
export * from "./lifecycle.js";
export * from "./intercept.js";
export * from "./security.js";
export * from "./stdio.js";

/** The schema of every record type, by `event` (a type with several shapes: a union of them). */
export const RECORD_SCHEMAS = {
  start: z.union([StartRecordSchema, StdioStartRecordSchema]),
  stop: StopRecordSchema,
  http: HttpRecordSchema,
  rpc: RpcRecordSchema,
  session: SessionRecordSchema,
  auth: AuthRecordSchema,
  intercept: InterceptRecordSchema,
  policy: PolicyRecordSchema,
  rate_limit_overflow: RateLimitOverflowRecordSchema,
  state_unavailable: StateUnavailableRecordSchema,
  otlp_export: OtlpExportRecordSchema,
  record_stream_drops: RecordStreamDropsRecordSchema,
  table_evicted: TableEvictedRecordSchema,
  refused: RefusedRecordSchema,
  ui_error: UiErrorRecordSchema,
  tunnel: TunnelRecordSchema,
  websocket: WebsocketRecordSchema,
  client_tls_error: ClientTlsErrorRecordSchema,
  addon_error: z.union([AddonErrorRecordSchema, StdioAddonErrorRecordSchema]),
  engine_error: EngineErrorRecordSchema,
  insecure_upstream: InsecureUpstreamRecordSchema,
  ca_warning: CaWarningRecordSchema,
  stderr: StderrRecordSchema,
  spawn_error: SpawnErrorRecordSchema,
} as const;

export type RecordType = keyof typeof RECORD_SCHEMAS;

/** Any record this version writes. */
export type WiretapRecord = z.infer<(typeof RECORD_SCHEMAS)[RecordType]>;
