import { constants } from "node:os";

/**
 * The exit status that passes a child's end on, as a shell does: its own code, or 128 + the number of the
 * signal that ended it (SIGTERM: 143). A signal with no known number still means failure: 1, rather than a
 * 128 that would read as "signal 0".
 */
export function exitStatus(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const number = signal ? constants.signals[signal] : undefined;
  return number ? 128 + number : 1;
}
