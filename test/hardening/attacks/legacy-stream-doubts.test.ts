/**
 * A legacy HTTP+SSE GET stream is not known to be MCP when its headers arrive (no MCP header on the GET, its
 * endpoint not yet announced): the two-Content-Type-lines refusal, and the charset and line-break doubts of an
 * event, only applied to exchanges already known to be MCP. So a legacy stream with a second Content-Type line
 * naming ISO-8859-1 passed whole: httpx reads byte 0x85 (the second byte of "Å" in UTF-8) as NEL, a line break,
 * and a comment hid a `data:` line carrying a key; and an event before the endpoint with U+2028 in a comment
 * passed as received.
 */
import { request } from "undici";
import { ProxyAgent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { AWS_KEY_ID } from "../../policy/scripted-server.js";
import { wireScenario } from "../../policy/wire-scenario.js";
import { leak, pythonEvents } from "./python-sse-reader.js";

/** How httpx decodes a body: the last `charset=` of its Content-Type lines joined with ", " (ISO-8859-1 as Python reads it). */
function httpxText(headers: Record<string, string | string[] | undefined>, body: Buffer): string {
  const joined = [headers["content-type"] ?? []].flat().join(", ");
  const charset = /charset=([\w-]+)/i.exec(joined)?.[1]?.toLowerCase() ?? "utf-8";
  return ["latin1", "latin-1", "iso-8859-1"].includes(charset) ? body.toString("latin1") : new TextDecoder(charset).decode(body);
}

describe("doubts on a legacy HTTP+SSE GET stream (enforce mode)", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let agent: ProxyAgent;
  const scenario = wireScenario(`mode: enforce\ndetectors: { secrets: deny }\n`);
  beforeAll(() => {
    ({ up, proxy } = scenario);
    agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
  });
  afterAll(async () => agent.destroy().catch(() => undefined));

  const get = async (path: string): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> => {
    const res = await request(`${up.url}${path}`, { method: "GET", dispatcher: agent, headers: { accept: "text/event-stream" }, headersTimeout: 5000, bodyTimeout: 5000 });
    const body = Buffer.from(await res.body.arrayBuffer());
    return { headers: res.headers, body };
  };

  it("a second Content-Type line naming ISO-8859-1: the client never reads the key", async () => {
    up.route("GET", "/sse-latin1", (_req, res) => {
      res.writeHead(200, ["content-type", "text/event-stream", "content-type", "text/event-stream; charset=iso-8859-1", "cache-control", "no-cache"]);
      res.write("event: endpoint\ndata: /messages?sessionId=latin1\n\n");
      // "Å" is C3 85 in UTF-8: in ISO-8859-1 the 0x85 is NEL, a line break to httpx, ending the comment.
      res.end(Buffer.from(`: Ådata: ${leak(1)}\n\n`, "utf8"));
    });
    const { headers, body } = await get("/sse-latin1");
    expect(pythonEvents(httpxText(headers, body)).join("\n")).not.toContain(AWS_KEY_ID.slice(8));
    const rec = await proxy.waitForRecord((r) => JSON.stringify(r).includes("2 Content-Type header lines"), { what: "the refusal's record" });
    expect(rec).toBeDefined();
  });

  it("one Content-Type line `text/plain, text/event-stream` (an event stream to httpx-sse): the client never reads the key", async () => {
    up.route("GET", "/sse-listed", (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain, text/event-stream", "cache-control": "no-cache" });
      res.write("event: endpoint\ndata: /messages?sessionId=listed\n\n");
      res.end(`data: ${leak(1)}\n\n`);
    });
    const { headers, body } = await get("/sse-listed");
    expect(pythonEvents(httpxText(headers, body)).join("\n")).not.toContain(AWS_KEY_ID.slice(8));
    const rec = await proxy.waitForRecord((r) => JSON.stringify(r).includes("text/plain, text/event-stream"), { what: "the refusal's record" });
    expect(rec).toMatchObject({ decision: { action: "deny", enforced: true } });
  });

  it("U+2028 in a comment before the endpoint event: the client never reads the key", async () => {
    up.route("GET", "/sse-early", (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(`: hello\u2028data: ${leak(1)}\n\n`);
      res.end("event: endpoint\ndata: /messages?sessionId=early\n\n");
    });
    const { headers, body } = await get("/sse-early");
    expect(pythonEvents(httpxText(headers, body)).join("\n")).not.toContain(AWS_KEY_ID.slice(8));
    expect(body.toString("utf8")).toContain("event: endpoint");
    const rec = await proxy.waitForRecord((r) => JSON.stringify(r).includes("U+2028"), { what: "the dropped event's record" });
    expect(rec).toMatchObject({ decision: { action: "deny", enforced: true } });
  });
});
