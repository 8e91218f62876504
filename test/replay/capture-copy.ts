/** A fresh copy of a capture (0600, ours) for one test to append its replay's records to. Not a test file. */
import { chmodSync, copyFileSync } from "node:fs";
import path from "node:path";

export function copyOfCapture(capture: string, name: string): string {
  const file = path.join(path.dirname(capture), `${name}.ndjson`);
  copyFileSync(capture, file);
  chmodSync(file, 0o600);
  return file;
}
