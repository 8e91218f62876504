import { writeOutputFile } from "../util/output-file.js";

/** Writes a report file: created 0600, never through a symlink planted at its name (util/output-file). */
export async function writeReport(file: string, text: string): Promise<void> {
  await writeOutputFile(file, text, "--output");
}
