/** The demo's server over stdio (run as its own process by `mcp-wiretap demo`): one JSON-RPC message a line. */
import { createInterface } from "node:readline";
import { answer, type JsonRpc } from "./demo-tools.js";

createInterface({ input: process.stdin }).on("line", (line) => {
  let message: JsonRpc;
  try {
    message = JSON.parse(line) as JsonRpc;
  } catch {
    return;
  }
  const { progress, reply } = answer(message);
  for (const m of [...progress, ...(reply ? [reply] : [])]) process.stdout.write(`${JSON.stringify(m)}\n`);
});
