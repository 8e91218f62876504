/** What `--intercept` did with each message it held (docs/log-format.md, intercept). */
import { z } from "zod";
import { common, count, nullableString, requestId, transport } from "./common.js";

export const InterceptRecordSchema = z.strictObject({
  ...common("info", "warn"),
  event: z.literal("intercept"),
  flow: z.string(),
  transport,
  server: z.string(),
  session: nullableString,
  direction: z.enum(["client_to_server", "server_to_client"]),
  id: requestId.nullable(),
  method: nullableString,
  tool: nullableString,
  action: z.enum(["forwarded", "edited", "dropped", "timeout", "answer_failed"]),
  heldMs: count,
  reason: z.string().optional(),
  message: z.unknown().optional(),
  edited: z.unknown().optional(),
});
export type InterceptRecord = z.infer<typeof InterceptRecordSchema>;
