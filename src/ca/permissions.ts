/**
 * The CA folder must be private to its owner (0700) and the CA key readable only by them (0600):
 * anyone who can read the key can impersonate any site to a client that trusts the CA.
 * File modes mean little on Windows, so these checks are skipped there.
 */
import { chmod, mkdir, stat } from "node:fs/promises";
import path from "node:path";
import { CaError } from "./errors.js";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
const enforced = process.platform !== "win32";

/** Creates `dir` with mode 0700, or tightens an existing folder to 0700. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  try {
    await mkdir(path.dirname(dir), { recursive: true });
    await mkdir(dir, { mode: PRIVATE_DIR_MODE });
  } catch (error) {
    if (errorCode(error) !== "EEXIST") {
      throw new CaError(`Cannot create the CA folder ${dir}: ${describe(error)}. Choose another folder with --ca-dir.`);
    }
  }
  const info = await stat(dir);
  if (!info.isDirectory()) {
    throw new CaError(`The CA folder ${dir} exists but is not a folder. Move it away or choose another with --ca-dir.`);
  }
  // A folder just made can still differ: the umask may have removed some of the owner's bits.
  if ((info.mode & 0o777) !== PRIVATE_DIR_MODE) {
    await setMode(dir, info.mode, PRIVATE_DIR_MODE, "folder", `chmod 700 ${quote(dir)}`);
  }
}

/** Tightens the CA key file to 0600 if group or others have any access to it (0400 is left alone). */
export async function ensurePrivateKeyFile(file: string): Promise<void> {
  const info = await stat(file);
  if ((info.mode & 0o077) !== 0) {
    await setMode(file, info.mode, PRIVATE_FILE_MODE, "key file", `chmod 600 ${quote(file)}`);
  }
}

async function setMode(target: string, mode: number, wanted: number, what: string, fix: string): Promise<void> {
  if (!enforced) return;
  try {
    await chmod(target, wanted);
  } catch (error) {
    throw new CaError(
      `The CA ${what} ${target} has mode ${octal(mode)} and could not be changed to ${octal(wanted)} ` +
        `(${describe(error)}). Run \`${fix}\` as its owner, or choose another CA folder with --ca-dir.`,
    );
  }
}

export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function describe(error: unknown): string {
  return errorCode(error) ?? (error instanceof Error ? error.message : String(error));
}

function octal(mode: number): string {
  return "0" + (mode & 0o777).toString(8).padStart(3, "0");
}

function quote(file: string): string {
  return /^[\w./-]+$/.test(file) ? file : `'${file.replace(/'/g, `'\\''`)}'`;
}
