/**
 * An ordinary (not root) user to run a command as, so that tests of what an ordinary user is refused run
 * under root too (CI runs as root): ourselves when we are not root; as root, `nobody` through `setpriv`.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

export interface OrdinaryUser {
  uid: number;
  gid: number;
  /** What goes before a command to run it as that user (empty: we are that user). */
  prefix: string[];
}

/** The user, or why there is none (the reason a test that needs one is skipped). */
export const ordinaryUser: OrdinaryUser | { missing: string } = findOrdinaryUser();

function findOrdinaryUser(): OrdinaryUser | { missing: string } {
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  if (uid === undefined || gid === undefined) return { missing: "no POSIX users on this platform" };
  if (uid !== 0) return { uid, gid, prefix: [] };
  const nobody = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .map((line) => line.split(":"))
    .find((fields) => fields[0] === "nobody");
  if (!nobody) return { missing: "running as root, and /etc/passwd has no user nobody to run as" };
  const [nobodyUid, nobodyGid] = [Number(nobody[2]), Number(nobody[3])];
  const prefix = ["setpriv", `--reuid=${nobodyUid}`, `--regid=${nobodyGid}`, "--clear-groups", "--"];
  try {
    execFileSync(prefix[0]!, [...prefix.slice(1), "true"], { stdio: "ignore", timeout: 5_000 });
  } catch (error) {
    return { missing: `running as root, and setpriv cannot run a command as nobody (${(error as Error).message})` };
  }
  return { uid: nobodyUid, gid: nobodyGid, prefix };
}
