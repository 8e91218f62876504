/**
 * Held log lines searched or parsed in turns of the event loop, for the handlers that may run in the proxy
 * (the web UI's downloads, token estimates and replay lookups): one long history or one very long line must
 * not keep the proxy's exchanges waiting for a whole pass.
 */
import { setImmediate as yieldToLoop } from "node:timers/promises";
import type { LogRecord } from "./filters.js";
import { parseRecord } from "./parse-record.js";

/** Lines handled between two turns of the loop, or characters, whichever comes first. */
export const LINES_PER_TURN = 1_000;
export const CHARS_PER_TURN = 1024 * 1024;

/**
 * Calls `each(item, index)` on every item in order, with a turn of the loop after every LINES_PER_TURN items
 * or CHARS_PER_TURN characters (as `charsOf` counts them). `each` may throw to stop (the promise rejects with
 * what it threw).
 */
export async function eachInTurns<T>(items: readonly T[], each: (item: T, index: number) => void, charsOf: (item: T) => number = () => 0): Promise<void> {
  let chars = 0;
  let sinceTurn = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (sinceTurn >= LINES_PER_TURN || chars >= CHARS_PER_TURN) {
      sinceTurn = 0;
      chars = 0;
      await yieldToLoop();
    }
    sinceTurn++;
    chars += charsOf(item);
    each(item, i);
  }
}

/** `eachInTurns` over lines, counting their characters. */
export function eachLineInTurns(lines: readonly string[], each: (line: string, index: number) => void): Promise<void> {
  return eachInTurns(lines, each, (line) => line.length);
}

/** The lines that pass `test`, searched in turns. */
export async function linesWithInTurns(lines: readonly string[], test: (line: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  await eachLineInTurns(lines, (line) => void (test(line) && out.push(line)));
  return out;
}

/** Each line that is a JSON object, with its record, parsed in turns (other lines are left out). */
export async function recordsInTurns(lines: readonly string[]): Promise<{ record: LogRecord; line: string }[]> {
  const out: { record: LogRecord; line: string }[] = [];
  await eachLineInTurns(lines, (line) => {
    const record = parseRecord(line);
    if (record) out.push({ record, line });
  });
  return out;
}

let passes: Promise<unknown> = Promise.resolve();

/**
 * Runs `pass` after every pass started before it has ended: the process's passes that hold a parsed copy of
 * many lines (a UI's download, its token count, a replay's lookup) run one at a time, so at most one such
 * copy (up to each handler's own bound) exists at once, not one per handler.
 */
export function oneHeldPassAtATime<T>(pass: () => Promise<T>): Promise<T> {
  const run = passes.then(pass);
  passes = run.catch(() => undefined);
  return run;
}
