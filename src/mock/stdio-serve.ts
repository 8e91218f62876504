/** `mock --stdio`: one JSON-RPC message a line on stdin, answers a line each on stdout. */
import { LineSplitter } from "../saved-logs/reader.js";
import type { MockServer, Reply } from "./mock-server.js";

/** Resolves once stdin has ended and every answer due has been written. */
export function serveStdio(server: MockServer, stdin: NodeJS.ReadableStream, stdout: NodeJS.WritableStream): Promise<void> {
  const lines = new LineSplitter();
  let pending = 0;
  let ended = false;
  return new Promise((resolve) => {
    const settle = (): void => {
      if (ended && pending === 0) resolve();
    };
    const send = (replies: Reply[]): void => {
      for (const reply of replies) {
        const write = (): void => {
          stdout.write(`${JSON.stringify(reply.message)}\n`);
          pending--;
          settle();
        };
        pending++;
        if (reply.atMs > 0) setTimeout(write, reply.atMs);
        else write();
      }
    };
    stdin.on("data", (chunk: Buffer) => {
      for (const line of lines.push(chunk)) if (line.trim() !== "") send(server.receiveText(line));
    });
    stdin.once("end", () => {
      for (const line of lines.flush()) if (line.trim() !== "") send(server.receiveText(line));
      ended = true;
      settle();
    });
  });
}
