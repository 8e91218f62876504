import type { ServerResponse } from "node:http";

/** A short answer in plain text (an error or a refusal), one line. */
export function answerPlain(res: ServerResponse, status: number, reason: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(`${reason}\n`);
}

/** What the held lines a handler would parse take, counted before any is parsed. */
export function sourceBytes(lines: readonly string[]): number {
  let bytes = 0;
  for (const line of lines) bytes += line.length;
  return bytes;
}
