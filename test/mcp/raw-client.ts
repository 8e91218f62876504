/**
 * A raw MCP client for wire-level tests: undici `fetch` (or `request`, which does not decode
 * content-encoding) through the proxy, trusting the proxy's CA. Not a test file.
 */
import { ProxyAgent, fetch, type Response } from "undici";
import type { LogRecord, TestProxy } from "../helpers/proxy-harness.js";

export interface RawClient {
  agent: ProxyAgent;
  post(url: string, body: unknown, headers?: Record<string, string>, signal?: AbortSignal): Promise<Response>;
  get(url: string, headers?: Record<string, string>, signal?: AbortSignal): Promise<Response>;
  close(): Promise<void>;
}

export function rawClient(proxy: TestProxy): RawClient {
  const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
  return {
    agent,
    post(url, body, headers = {}, signal) {
      return fetch(url, {
        method: "POST",
        dispatcher: agent,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    },
    get(url, headers = {}, signal) {
      return fetch(url, { dispatcher: agent, headers: { accept: "text/event-stream", ...headers }, ...(signal ? { signal } : {}) });
    },
    async close() {
      await agent.destroy().catch(() => undefined);
    },
  };
}

/** Reads a streamed body as text, chunk by chunk, until `done(text)` is true; leaves the stream open. */
export async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  done: (text: string) => boolean,
  sofar = { text: "" },
  timeoutMs = 5_000,
): Promise<string> {
  const decoder = new TextDecoder();
  const deadline = Date.now() + timeoutMs;
  while (!done(sofar.text)) {
    if (Date.now() > deadline) throw new Error(`stream did not deliver the expected text; got ${JSON.stringify(sofar.text)}`);
    const { value, done: ended } = await reader.read();
    if (ended) break;
    sofar.text += decoder.decode(value, { stream: true });
  }
  return sofar.text;
}

export const isRpc = (r: LogRecord): boolean => r.event === "rpc";

/** rpc records whose path starts with `prefix`. */
export function rpcOn(records: LogRecord[], prefix: string): LogRecord[] {
  return records.filter((r) => isRpc(r) && typeof r.path === "string" && r.path.startsWith(prefix));
}
