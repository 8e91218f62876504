import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * When `skipped`, says why this file's tests that need it are skipped here: the run's summary
 * (skip-summary-reporter.ts) lists the reason beside them. `file` is the test file's import.meta.url.
 */
export function skipNote(file: string, skipped: boolean, why: string): void {
  if (skipped) console.warn(`SKIPPED ${path.relative(ROOT, fileURLToPath(file))}: ${why}`);
}
