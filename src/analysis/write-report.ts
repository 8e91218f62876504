import { constants } from "node:fs";
import { open } from "node:fs/promises";

/** Writes a report file: created 0600, never through a symlink planted at its name. */
export async function writeReport(file: string, text: string): Promise<void> {
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}
