/**
 * The CA folder must be private to its owner and the CA key readable only by them (0600): anyone who can
 * read the key can impersonate any site to a client that trusts the CA. The rules are those of every private
 * file (src/util/private-file.ts): nothing is chmod-ed that this code did not create, links are not followed,
 * and a key that others could read is refused for good, since it may already have been copied.
 */
import { statSync } from "node:fs";
import { PrivateFileError, ensurePrivateDir, octal, readPrivateFile } from "../util/private-file.js";
import { CaError, startOverAdvice } from "./errors.js";

export { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, errorCode } from "../util/private-file.js";

/** Creates `dir` (0700), or checks that the existing folder is ours and that nobody else can write to it. */
export function ensureCaDir(dir: string): void {
  try {
    ensurePrivateDir(dir, "The CA folder");
  } catch (error) {
    if (error instanceof PrivateFileError) {
      throw new CaError(`${error.message} The CA key must live in a private folder: give one with --ca-dir.`);
    }
    throw new CaError(`Cannot create the CA folder ${dir}: ${describe(error)}. Choose another folder with --ca-dir.`);
  }
}

/** Reads a CA file (never through a link), or null when it does not exist. */
export function readCaFile(file: string, role: "key" | "certificate", paths: { certPath: string; keyPath: string }): string | null {
  try {
    return readPrivateFile(file, role === "key" ? "The CA key" : "The CA certificate", { secret: role === "key" });
  } catch (error) {
    if (!(error instanceof PrivateFileError)) throw error;
    if (role === "key" && (error.problem === "readable_by_others" || error.problem === "writable_by_others")) {
      throw new CaError(exposedKeyMessage(file, paths));
    }
    throw new CaError(`${error.message} ${startOverAdvice(paths.certPath, paths.keyPath)}`);
  }
}

/** Others could read the key: it must be treated as copied, and replaced rather than tightened. */
function exposedKeyMessage(file: string, paths: { certPath: string; keyPath: string }): string {
  let mode = ":";
  try {
    mode = ` has mode ${octal(statSync(file).mode)}:`;
  } catch {
    // gone meanwhile: the message stands without the mode
  }
  return (
    `The CA key ${file}${mode} other users of this machine can read it, so it may have been read already, and ` +
    `whoever has it can impersonate any site to the clients that trust this CA. mcp-wiretap does not use it. ` +
    `${startOverAdvice(paths.certPath, paths.keyPath)}`
  );
}

function describe(error: unknown): string {
  return (error as NodeJS.ErrnoException | null)?.code ?? (error instanceof Error ? error.message : String(error));
}
