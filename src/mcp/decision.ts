/** What a rule or detector asks for a message (the policy file's `deny`, `flag`, `allow`). */
export type Action = "allow" | "deny" | "flag";

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

/**
 * The policy's judgement of one message. Part of the message model (a judged message carries it), so that the
 * stages acting on judgements need nothing of the policy that makes them.
 */
export interface Decision {
  action: "allow" | "deny" | "flag";
  /** The proxy acted on it (enforce mode and a denial it can carry out). */
  enforced: boolean;
  rules: DecisionRule[];
  /** What enforcement did on the wire (set once it did it), e.g. "not forwarded". */
  effect?: string;
}
