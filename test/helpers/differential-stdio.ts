/**
 * The stdio side of the differential check (not a test file): the bytes a peer of `mcp-wiretap stdio`
 * received, read by each reference reader (the TypeScript SDK's own ReadBuffer, and the Python readers of
 * reference-readers.py: the Python SDK, Java/.NET readLine, str.splitlines(), a C-string reader, a stream
 * decoder, readLine with a parser that skips a byte order mark), compared
 * with the records. Every request or notification a reader reads must have a record of its direction with
 * the same method, tool and id (the id as the reader read its digits); every answer it reads that the proxy
 * did not write must have one too. In enforce mode, none of them may have been denied.
 */
import { ReadBuffer } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { LogRecord } from "./proxy-harness.js";
import { PYTHON, PYTHON_READERS, pythonRead, type ReadMessage } from "./stdio-raw.js";

/** Codes of the errors the proxy itself writes in enforce mode (policy, unreadable, judgement failed). */
const PROXY_CODES = new Set([-32051, -32052, -32053]);

/** What the TypeScript SDK's StdioServerTransport / StdioClientTransport read (a line that fails is skipped, as they do). */
export function tsSdkRead(bytes: Buffer): ReadMessage[] {
  const buffer = new ReadBuffer();
  buffer.append(bytes);
  const out: ReadMessage[] = [];
  for (let i = 0; i < 100_000; i++) {
    let message: unknown;
    try {
      message = buffer.readMessage();
    } catch {
      continue;
    }
    if (message === null) break;
    const m = message as { id?: unknown; method?: unknown; params?: { name?: unknown }; error?: { code?: unknown } };
    const method = typeof m.method === "string" ? m.method : null;
    out.push({
      kind: method !== null ? ("id" in m ? "request" : "notification") : "answer",
      method,
      tool: method === "tools/call" && typeof m.params?.name === "string" ? m.params.name : null,
      id: "id" in m ? JSON.stringify(m.id) : null,
      code: typeof m.error?.code === "number" ? m.error.code : null,
    });
  }
  return out;
}

/** Every reader's reading of `bytes`, by reader name. */
export function readAll(bytes: Buffer): Map<string, ReadMessage[]> {
  const readings = new Map<string, ReadMessage[]>([["typescript-sdk", tsSdkRead(bytes)]]);
  if (PYTHON) for (const mode of PYTHON_READERS) readings.set(mode, pythonRead(mode, bytes));
  return readings;
}

export interface StdioCheck {
  direction: "client_to_server" | "server_to_client";
  enforce: boolean;
  deniedTools: readonly string[];
  deniedMethods: readonly string[];
}

/** What the readers of one direction read that the records do not account for. */
export function stdioFindings(bytes: Buffer, records: readonly LogRecord[], o: StdioCheck): string[] {
  const mine = records.filter((r) => r.event === "rpc" && r.direction === o.direction);
  const findings: string[] = [];
  for (const [reader, messages] of readAll(bytes)) {
    for (const m of messages) {
      if (m.kind === "answer" && m.code !== null && PROXY_CODES.has(m.code)) continue;
      const label = `${reader} read ${m.kind} ${m.method ?? ""} ${m.tool ?? ""} id ${m.id ?? "-"} (${o.direction})`;
      const same = mine.filter((r) => {
        // An id past 2^53 is recorded as JavaScript reads its digits (with the doubt saying so).
        if (m.id !== null && JSON.stringify(r.id) !== m.id && !(typeof r.id === "number" && Number(m.id) === r.id)) return false;
        if (m.kind === "answer") return r.kind === "response" || r.kind === "error";
        return r.kind === m.kind && r.method === m.method && (m.tool === null || r.tool === m.tool);
      });
      if (same.length === 0) {
        findings.push(`${label}: no record with that method, tool and id`);
        continue;
      }
      if (!o.enforce) continue;
      if (same.some((r) => (r.decision as { enforced?: boolean } | undefined)?.enforced === true)) findings.push(`${label}: denied, yet it reached the reader`);
      if ((m.tool !== null && o.deniedTools.includes(m.tool)) || (m.method !== null && o.deniedMethods.includes(m.method))) findings.push(`${label}: a denied tool or method reached the reader`);
    }
  }
  return findings;
}
