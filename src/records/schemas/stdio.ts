/** Records only `mcp-wiretap stdio` writes (its `rpc`, `session` and `stop` records are the proxy's). */
import { z } from "zod";
import { common, count, policyInUse } from "./common.js";

/** The launch (docs/log-format.md, stdio launches). */
export const StdioStartRecordSchema = z.strictObject({
  ...common("info"),
  event: z.literal("start"),
  version: z.string(),
  transport: z.literal("stdio"),
  server: z.string(),
  session: z.string(),
  command: z.array(z.string()),
  pid: z.number().int().optional(),
  policy: policyInUse,
  log: z.string(),
});
export type StdioStartRecord = z.infer<typeof StdioStartRecordSchema>;

/** One line of the server's stderr, or (at the end, alone) only the count of lines left out. */
export const StderrRecordSchema = z.strictObject({
  ...common("info", "warn"),
  event: z.literal("stderr"),
  server: z.string(),
  session: z.string(),
  line: z.string().optional(),
  bytes: count.optional(),
  truncated: z.literal(true).optional(),
  suppressedLines: z.number().int().positive().optional(),
});
export type StderrRecord = z.infer<typeof StderrRecordSchema>;

export const SpawnErrorRecordSchema = z.strictObject({
  ...common("error"),
  event: z.literal("spawn_error"),
  server: z.string(),
  command: z.string(),
  code: z.string(),
  message: z.string(),
});
export type SpawnErrorRecord = z.infer<typeof SpawnErrorRecordSchema>;

/** A stage failed on a stdio line. */
export const StdioAddonErrorRecordSchema = z.strictObject({
  ...common("error"),
  event: z.literal("addon_error"),
  addon: z.literal("stdio"),
  hook: z.literal("line"),
  server: z.string(),
  session: z.string(),
  direction: z.enum(["client_to_server", "server_to_client"]),
  err: z.string(),
});
export type StdioAddonErrorRecord = z.infer<typeof StdioAddonErrorRecordSchema>;

export const UiErrorRecordSchema = z.strictObject({
  ...common("warn"),
  event: z.literal("ui_error"),
  message: z.string(),
});
export type UiErrorRecord = z.infer<typeof UiErrorRecordSchema>;
