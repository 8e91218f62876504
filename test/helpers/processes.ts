import { readdirSync, readFileSync } from "node:fs";

/** Processes whose command line contains `token` (Linux: /proc). */
export function processesWith(token: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(token);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}
