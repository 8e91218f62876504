import type { Action } from "./config.js";

/** What a detector found: its kind and where, never the matched secret itself. */
export interface PolicyFinding {
  type: string;
  path: string;
  detail?: string;
}

export interface DecisionRule {
  name: string;
  action: Action;
  reason?: string;
  findings?: PolicyFinding[];
}

/** The policy's judgement of one message (its own module: the message model and the policy both name it). */
export interface Decision {
  action: "allow" | "deny" | "flag";
  /** The proxy acted on it (enforce mode and a denial it can carry out). */
  enforced: boolean;
  rules: DecisionRule[];
  /** What enforcement did on the wire (set once it did it), e.g. "not forwarded". */
  effect?: string;
}
