import { constants, createWriteStream, lstatSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { descriptorOfPath, errorCode, PrivateFileError, streamKindOf, symlinkMessage, writeFileAtomic } from "./private-file.js";

/**
 * Writes an export or a report to the path the user named, as `> PATH` would, but without the harm a rename
 * can do: `/dev/stdout`, `/dev/fd/N` (a shell's `>(cmd)`) are written as their descriptor; a device, a FIFO
 * or a socket as a stream, never replaced or truncated; a symbolic link is refused (writing through it would
 * go where whoever planted it chose, replacing it would replace e.g. /dev/stdout); anything else gets a new
 * 0600 file renamed into place (util/private-file).
 */
export async function writeOutputFile(file: string, data: string, what: string): Promise<void> {
  try {
    await writeOutput(file, data, what);
  } catch (error) {
    if (error instanceof PrivateFileError) throw error;
    // Named by the target, never by the temporary file beside it that the error may speak of.
    throw new OutputFileError(`${what} ${file}: cannot write it (${errorCode(error) ?? (error as Error).message})`);
  }
}

export class OutputFileError extends Error {}

async function writeOutput(file: string, data: string, what: string): Promise<void> {
  const fd = descriptorOfPath(file);
  if (fd !== null) return writeToDescriptor(fd, data);
  const info = lstatOrNull(file);
  if (info?.isSymbolicLink()) throw new PrivateFileError(symlinkMessage(what, file), "symlink");
  if (info && streamKindOf(info)) {
    const handle = await open(file, constants.O_WRONLY | constants.O_NOFOLLOW);
    try {
      await handle.writeFile(data, "utf8");
    } finally {
      await handle.close();
    }
    return;
  }
  if (info && !info.isFile()) throw new PrivateFileError(`${what} ${file} is not a regular file. Choose another path.`, "not_regular");
  await writeFileAtomic(file, data);
}

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    throw error;
  }
}

function writeToDescriptor(fd: number, data: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = createWriteStream("", { fd, autoClose: false });
    stream.once("error", reject);
    stream.end(data, () => resolve());
  });
}
