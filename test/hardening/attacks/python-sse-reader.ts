/**
 * How a Python MCP client reads an event stream, for the attacks that hide events from the proxy: httpx splits
 * a response into lines as str.splitlines() does (also at VT, FF, FS, GS, RS, NEL, U+2028, U+2029), and
 * httpx-sse 0.4.0 reads events from those lines.
 */
import { AWS_KEY_ID } from "../../policy/scripted-server.js";

/** The lines httpx reads from a text (str.splitlines). */
export const PY_LINE_BREAKS = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;

/** What httpx-sse 0.4.0 dispatches: each event's name and data, from lines split as httpx splits them. */
export function pythonSseEvents(text: string): { event: string; data: string }[] {
  const out: { event: string; data: string }[] = [];
  let data: string[] = [];
  let event = "message";
  for (const line of text.split(PY_LINE_BREAKS)) {
    if (line === "") {
      if (data.length > 0) out.push({ event, data: data.join("\n") });
      data = [];
      event = "message";
    } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    else if (line.startsWith("event:")) event = line.slice(6).replace(/^ /, "");
  }
  return out;
}

/** The data of each event httpx-sse dispatches. */
export function pythonEvents(text: string): string[] {
  return pythonSseEvents(text).map((e) => e.data);
}

/** An answer to request `id` carrying an AWS key: what the secrets detector must keep from the client. */
export const leak = (id: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } });
