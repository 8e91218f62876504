/**
 * A raw MCP client for the policy's wire tests (not a test file): undici through the proxy, trusting
 * its CA, returning the exact bytes received.
 */
import { ProxyAgent, request } from "undici";
import type { TestProxy } from "../helpers/proxy-harness.js";

export interface WireResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: unknown;
}

export interface WireClient {
  post(url: string, body: unknown, headers?: Record<string, string | string[]>): Promise<WireResponse>;
  close(): Promise<void>;
}

/** undici `request` does not decode content-encoding: what arrives is what the proxy sent. */
export function wireClient(proxy: Pick<TestProxy, "url" | "caPem">): WireClient {
  const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
  return {
    async post(url, body, headers = {}) {
      const res = await request(url, {
        method: "POST",
        dispatcher: agent,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body),
      });
      const bytes = Buffer.from(await res.body.arrayBuffer());
      const text = bytes.toString("utf8");
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, headers: res.headers, body: bytes, text, json };
    },
    async close() {
      await agent.destroy().catch(() => undefined);
    },
  };
}

/** Splits an event-stream body into its events (each without the blank line). */
export function sseEvents(text: string): string[] {
  return text.split(/\n\n/).filter((e) => e.length > 0);
}

/** The JSON of each `data:` line of an event stream. */
export function sseData(text: string): unknown[] {
  return sseEvents(text)
    .map((e) => e.split("\n").find((l) => l.startsWith("data: ")))
    .filter((l): l is string => l !== undefined)
    .map((l) => JSON.parse(l.slice(6)) as unknown);
}
