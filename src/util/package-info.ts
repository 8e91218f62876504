import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

/** The package root: two levels above this module in both src/ and dist/. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export const VERSION: string = (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;

/** Default CA folder: the package's own certs/, so `npm start` and `npx mcp-wiretap ca path` agree. */
export const DEFAULT_CA_DIR = path.join(PACKAGE_ROOT, "certs");

/** The policy used when --config is not given: monitor mode, detectors on. */
export const DEFAULT_POLICY_FILE = path.join(PACKAGE_ROOT, "config", "policy.yaml");

/** The shipped policy's checked reading, written by `npm run build` (policy/checked-policy.ts). */
export const CHECKED_POLICY_FILE = path.join(PACKAGE_ROOT, "dist", "config", "policy.json");
