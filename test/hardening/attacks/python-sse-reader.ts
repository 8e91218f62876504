/**
 * How a Python MCP client reads an event stream, for the attacks that hide events from the proxy: httpx splits
 * a response into lines as str.splitlines() does (also at VT, FF, FS, GS, RS, NEL, U+2028, U+2029), and
 * httpx-sse 0.4.0 reads events from those lines.
 */
import { AWS_KEY_ID } from "../../policy/scripted-server.js";

/** The lines httpx reads from a text (str.splitlines). */
export const PY_LINE_BREAKS = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;

/** What httpx-sse 0.4.0 dispatches: the data of each event, from lines split as httpx splits them. */
export function pythonEvents(text: string): string[] {
  const out: string[] = [];
  let data: string[] = [];
  for (const line of text.split(PY_LINE_BREAKS)) {
    if (line === "") {
      if (data.length > 0) out.push(data.join("\n"));
      data = [];
    } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  return out;
}

/** An answer to request `id` carrying an AWS key: what the secrets detector must keep from the client. */
export const leak = (id: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } });
