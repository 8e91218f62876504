/** The policy's modes, apart from the policy schema (zod) so the command line can name them without loading it. */
export const POLICY_MODES = ["monitor", "enforce"] as const;
export type PolicyMode = (typeof POLICY_MODES)[number];
