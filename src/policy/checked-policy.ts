/**
 * The policy file's checked reading, kept from the build: `npm run build` validates the shipped
 * config/policy.yaml and writes what it read, with its text, to dist/config/policy.json. A
 * launch whose policy file has exactly that text takes the kept reading and never loads the YAML parser or
 * the policy schema (most of what a `stdio` launch would otherwise load); any other text, or no kept reading,
 * is read and checked as always.
 */
import { readFileSync } from "node:fs";
import type { PolicyConfig } from "./config.js";

export interface CheckedPolicy {
  /** The file's text, compared whole: a hash would need node:crypto, which a launch otherwise does without. */
  text: string;
  config: PolicyConfig;
}

/** The policy in `file`, validated; a bad file throws the same usage error as `loadPolicyFile`. */
export async function readPolicyConfig(file: string, checkedFile: string): Promise<PolicyConfig> {
  const kept = keptReading(file, checkedFile);
  return kept ?? (await import("./load-config.js")).loadPolicyFile(file);
}

function keptReading(file: string, checkedFile: string): PolicyConfig | null {
  try {
    const checked = JSON.parse(readFileSync(checkedFile, "utf8")) as CheckedPolicy;
    return typeof checked.text === "string" && checked.text === readFileSync(file, "utf8") ? checked.config : null;
  } catch {
    return null; // no kept reading, or a file that cannot be read: loadPolicyFile says why
  }
}
