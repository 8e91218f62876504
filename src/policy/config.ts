import { z } from "zod";
import { POLICY_MODES, type PolicyMode } from "./modes.js";

export { POLICY_MODES, type PolicyMode };

/** A value pattern: a glob, or a regular expression after "re:". */
const PatternSchema = z.string().min(1, "must not be empty");

export const DirectionSchema = z.enum(["client_to_server", "server_to_client"]);

export const MatchSchema = z.strictObject({
  /** host or host:port of the real destination */
  server: PatternSchema.optional(),
  method: PatternSchema.optional(),
  tool: PatternSchema.optional(),
  direction: DirectionSchema.optional(),
  kind: z.enum(["request", "notification", "response", "error"]).optional(),
  /** argument path (dot-separated) → pattern, for tools/call arguments */
  args: z.record(z.string().min(1), PatternSchema).optional(),
});
export type Match = z.infer<typeof MatchSchema>;

export const ActionSchema = z.enum(["allow", "deny", "flag"]);
export type Action = z.infer<typeof ActionSchema>;

export const RuleSchema = z.strictObject({
  name: z.string().min(1),
  action: ActionSchema,
  reason: z.string().optional(),
  match: MatchSchema.default({}),
});
export type Rule = z.infer<typeof RuleSchema>;

export const DetectorSettingSchema = z.enum(["off", "flag", "deny"]);
export type DetectorSetting = z.infer<typeof DetectorSettingSchema>;

export const DETECTOR_NAMES = ["secrets", "pii", "hiddenText", "poisoning", "toolPinning", "schema", "apps"] as const;
export type DetectorName = (typeof DETECTOR_NAMES)[number];

export const DetectorsSchema = z.strictObject({
  secrets: DetectorSettingSchema.default("flag"),
  pii: DetectorSettingSchema.default("flag"),
  hiddenText: DetectorSettingSchema.default("flag"),
  poisoning: DetectorSettingSchema.default("flag"),
  toolPinning: DetectorSettingSchema.default("flag"),
  schema: DetectorSettingSchema.default("flag"),
  apps: DetectorSettingSchema.default("flag"),
});

export const RateLimitSchema = z.strictObject({
  name: z.string().min(1),
  match: MatchSchema.default({}),
  perMinute: z.number().int().positive(),
  action: z.enum(["deny", "flag"]).default("deny"),
  /** what one budget covers */
  per: z.enum(["session", "server", "global"]).default("session"),
});
export type RateLimit = z.infer<typeof RateLimitSchema>;

export const PolicySchema = z
  .strictObject({
    mode: z.enum(POLICY_MODES).default("monitor"),
    default: z.enum(["allow", "deny"]).default("allow"),
    rules: z.array(RuleSchema).default([]),
    detectors: DetectorsSchema.default({
      secrets: "flag",
      pii: "flag",
      hiddenText: "flag",
      poisoning: "flag",
      toolPinning: "flag",
      schema: "flag",
      apps: "flag",
    }),
    rateLimits: z.array(RateLimitSchema).default([]),
    /** tools/list results: remove the tools a detector denies (true) or replace the whole result by an error */
    removeDeniedTools: z.boolean().default(true),
  })
  .superRefine((policy, ctx) => {
    const seen = new Map<string, string>();
    const names = [
      ...policy.rules.map((r, i) => [r.name, ["rules", i, "name"]] as const),
      ...policy.rateLimits.map((r, i) => [r.name, ["rateLimits", i, "name"]] as const),
    ];
    for (const [name, path] of names) {
      if (seen.has(name)) ctx.addIssue({ code: "custom", path: [...path], message: `duplicate name "${name}" (names appear in records and must be unique)` });
      seen.set(name, name);
    }
  });
export type PolicyConfig = z.infer<typeof PolicySchema>;
