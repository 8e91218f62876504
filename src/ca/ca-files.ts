/** Reading and writing the CA's files so that a crash or a second process never leaves half a file. */
import { randomBytes } from "node:crypto";
import { link, open, readFile, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { rootCertificates } from "node:tls";
import { errorCode } from "./permissions.js";

export async function readIfExists(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    throw error;
  }
}

/**
 * Writes `data` to `file` through a temporary file in the same folder, created with `mode` from the start
 * (so a key is never readable by others, not even briefly).
 * With `exclusive`, the file is put in place only if it does not exist yet and the return value says whether
 * it was; otherwise an existing file is replaced. Either way readers see the old file or the whole new one.
 */
export async function writeFileAtomic(
  file: string,
  data: string,
  mode: number,
  options: { exclusive?: boolean } = {},
): Promise<boolean> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const handle = await open(temp, "wx", mode);
    try {
      await handle.chmod(mode); // the umask may have cleared bits we want (0644)
      await handle.writeFile(data, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    let placed = true;
    if (options.exclusive) placed = await linkIfAbsent(temp, file);
    else await rename(temp, file);
    if (placed) await syncFolder(path.dirname(file));
    return placed;
  } finally {
    await unlink(temp).catch(() => undefined); // after link() or a failure; already gone after rename()
  }
}

/** Makes the new directory entry itself survive a crash. Not possible everywhere (Windows): best effort. */
async function syncFolder(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    await handle.sync().finally(() => handle.close());
  } catch {
    // the file's data is synced already; at worst a crash right now loses the new name
  }
}

// link() fails with EEXIST instead of replacing, which is what makes creating the CA safe against a
// second process doing the same at the same moment. Some file systems have no hard links: rename there.
async function linkIfAbsent(temp: string, file: string): Promise<boolean> {
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw error;
  }
  if ((await readIfExists(file)) !== null) return false;
  await rename(temp, file);
  return true;
}

/**
 * Node's built-in root certificates plus the CA, for clients whose CA setting replaces the default roots
 * instead of adding to them (Python's requests, curl --cacert). Rewritten when missing or without the CA.
 */
export async function ensureBundle(bundlePath: string, caPem: string, mode: number): Promise<void> {
  const current = await readIfExists(bundlePath);
  if (current !== null && current.includes(caPem.trim())) return;
  const bundle = [...rootCertificates, caPem.trim()].join("\n") + "\n";
  await writeFileAtomic(bundlePath, bundle, mode);
}
