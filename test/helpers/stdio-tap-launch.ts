/**
 * One stdio launch's tap over a recording pipeline with a policy of denying rules (not a test file): what it
 * forwards each way, taken as text, and every record it kept.
 */
import { capturingStdioTap } from "./capturing-stdio-tap.js";
import { policyFrom } from "../policy/policy-fixtures.js";
import { recordingPipeline } from "../pipeline/pipeline-fixtures.js";

export type TapMode = "enforce" | "monitor";
export type TapRecord = Record<string, unknown> & { decision?: { action: string; enforced: boolean; effect?: string; rules: { name: string; action: string }[] } };

export const DENY_DELETE_AND_SAMPLING =
  "rules:\n  - { name: no-delete, action: deny, match: { tool: delete_everything } }\n  - { name: no-sampling, action: deny, match: { method: sampling/createMessage } }\n";

export function launchTap(mode: TapMode, rules = DENY_DELETE_AND_SAMPLING) {
  const { pipeline, records } = recordingPipeline(policyFrom(`mode: ${mode}\n${rules}`), { payloads: { payloads: "full", maxPayloadBytes: 100_000 } });
  const { tap, toServer, toClient } = capturingStdioTap(pipeline, { maxInspectBytes: 100_000, mode });
  const take = (list: Buffer[]): string => Buffer.concat(list.splice(0)).toString();
  return { tap, records: records as TapRecord[], server: () => take(toServer), client: () => take(toClient) };
}
