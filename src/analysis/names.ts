/** The names the analysis commands accept on their command lines (kept apart so that parsing loads nothing else). */
export const GROUP_BY = ["tool", "method", "server", "session"] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export const CONDITIONS = ["error", "invalid", "deny", "flag", "pending", "mismatch", "drift", "app-changed", "deprecated", "incomplete"] as const;
export type Condition = (typeof CONDITIONS)[number];
export const DEFAULT_FAIL_ON: readonly Condition[] = ["error", "invalid", "deny"];
