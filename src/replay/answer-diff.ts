/** `replay --diff`: the captured answer beside the replay's, as a line diff of their pretty-printed JSON. */
import { escapeLine } from "../log/escape-line.js";
import { hunks, lineDiff } from "../analysis/line-diff.js";
import { obj, type LogRecord } from "../saved-logs/filters.js";
import type { Message } from "./channel.js";

export function answerDiff(captured: LogRecord | null, replayed: Message): string {
  const header = "--- captured\n+++ replay\n";
  if (captured === null) return `${header}(the capture holds no answer to this request)\n`;
  const field = captured.kind === "error" ? "error" : "result";
  const value = captured[field];
  const shaped = obj(value);
  if (shaped?.truncated === true || shaped?.omitted === true) return `${header}(the captured ${field} was not recorded whole: ${String(shaped.bytes)} bytes)\n`;
  const before = JSON.stringify({ [field]: value }, null, 2);
  const replayField = Object.hasOwn(replayed, "error") ? "error" : "result";
  const after = JSON.stringify({ [replayField]: replayed[replayField] }, null, 2);
  if (before === after) return `${header}(same answer)\n`;
  // Peer text on a terminal: control, bidi and invisible characters written as `\\uXXXX`.
  return header + hunks(lineDiff(before, after)).map((l) => `${l.op}${escapeLine(l.text)}`).join("\n") + "\n";
}
