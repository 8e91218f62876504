/** Pieces every record schema shares (docs/log-format.md, "Common fields"). */
import { z } from "zod";

type Level = "debug" | "info" | "warn" | "error";

/** Fields every record has (pino's, and the audit chain's with `--audit-chain`), at the levels the type is written at. */
export function common<const L extends readonly [Level, ...Level[]]>(...levels: L) {
  return {
    level: z.enum(levels),
    time: z.string(),
    msg: z.string().optional(),
    seq: z.number().int().nonnegative().optional(),
    prevHash: z.string().optional(),
    mac: z.string().optional(),
    replayOf: z.string().optional(),
  };
}

export const COMMON_FIELDS: readonly string[] = Object.keys(common("info"));

export const nullableString = z.string().nullable();
export const transport = z.enum(["streamable-http", "http+sse", "stdio"]);
export const requestId = z.union([z.string(), z.number()]);
export const count = z.number().int().nonnegative();
export const policyInUse = z.strictObject({ file: z.string(), mode: z.enum(["monitor", "enforce"]) });

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
