/** Reading and writing the CA's files so that a crash or a second process never leaves half a file. */
import { rootCertificates } from "node:tls";
import { PrivateFileError, readPrivateFile, writeFileAtomic } from "../util/private-file.js";

export { writeFileAtomic } from "../util/private-file.js";

/**
 * Node's built-in root certificates plus the CA, for clients whose CA setting replaces the default roots
 * instead of adding to them (Python's requests, curl --cacert). Rewritten when missing, without the CA, or
 * not a plain file of ours (the rename replaces a link; it never writes through one).
 */
export async function ensureBundle(bundlePath: string, caPem: string, mode: number): Promise<void> {
  let current: string | null = null;
  try {
    current = readPrivateFile(bundlePath, "The CA bundle", { secret: false });
  } catch (error) {
    if (!(error instanceof PrivateFileError)) throw error;
  }
  if (current !== null && current.includes(caPem.trim())) return;
  const bundle = [...rootCertificates, caPem.trim()].join("\n") + "\n";
  await writeFileAtomic(bundlePath, bundle, mode);
}
