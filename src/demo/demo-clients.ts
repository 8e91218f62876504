/** The demo's client: JSON-RPC over Streamable HTTP through the proxy, and over a launched process's stdio. */
import type { ChildProcessByStdio } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { fetch, ProxyAgent } from "undici";
import type { JsonRpc } from "./demo-tools.js";

export interface DemoClient {
  /** The answer to a request (every message before it, such as progress, in `before`). */
  request(method: string, params?: Record<string, unknown>): Promise<{ before: JsonRpc[]; reply: JsonRpc }>;
  notify(method: string): Promise<void>;
  close(): Promise<void>;
}

const TIMEOUT_MS = 10_000;

export function httpsClient(url: string, proxy: string, caPem: string): DemoClient {
  const dispatcher = new ProxyAgent({ uri: proxy, requestTls: { ca: caPem } });
  let session: string | null = null;
  let id = 0;
  const post = async (message: JsonRpc): Promise<JsonRpc[]> => {
    const res = await fetch(url, {
      method: "POST",
      dispatcher,
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" } : {}),
      },
      body: JSON.stringify(message),
    });
    session ??= res.headers.get("mcp-session-id");
    const text = await res.text();
    if (res.status === 202) return [];
    if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return [JSON.parse(text) as JsonRpc];
    return text
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => JSON.parse(line.slice(5)) as JsonRpc);
  };
  return {
    async request(method, params) {
      const messages = await post({ jsonrpc: "2.0", id: ++id, method, ...(params ? { params } : {}) });
      return { before: messages.slice(0, -1), reply: messages.at(-1) ?? { jsonrpc: "2.0", error: { message: "no answer" } } };
    },
    async notify(method) {
      await post({ jsonrpc: "2.0", method });
    },
    close: () => dispatcher.close(),
  };
}

export function stdioClient(child: ChildProcessByStdio<Writable, Readable, Readable>): DemoClient {
  let id = 0;
  const waiting = new Map<number, (m: JsonRpc) => void>();
  let before: JsonRpc[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    let m: JsonRpc;
    try {
      m = JSON.parse(line) as JsonRpc;
    } catch {
      return;
    }
    const done = typeof m.id === "number" ? waiting.get(m.id) : undefined;
    if (done) done(m);
    else before.push(m);
  });
  return {
    request(method, params) {
      const n = ++id;
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: n, method, ...(params ? { params } : {}) })}\n`);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer to ${method} over stdio`)), TIMEOUT_MS);
        waiting.set(n, (reply) => {
          clearTimeout(timer);
          waiting.delete(n);
          const seen = before;
          before = [];
          resolve({ before: seen, reply });
        });
      });
    },
    async notify(method) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`);
    },
    async close() {
      child.stdin.end();
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("close", resolve)));
    },
  };
}
