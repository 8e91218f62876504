/**
 * The proxy's answer to a server's dropped request, against a real loopback server: what the POST carries,
 * and that it is bounded (one timeout, a cap on answers in flight to one server) and reports, never throws.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpFlow } from "../../src/mcp/flow.js";
import type { MessageHandler } from "../../src/mcp/tracker.js";
import { ServerAnswers } from "../../src/intercept/server-answer.js";

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let server: http.Server;
let port: number;
const seen: Seen[] = [];
const parked: http.ServerResponse[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      if (req.url?.startsWith("/park")) parked.push(res);
      else if (req.url?.startsWith("/refuse")) res.writeHead(500).end();
      else res.writeHead(202).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const res of parked) res.end();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const recorded: unknown[] = [];
const pipeline = {
  message: (_ctx: unknown, raw: unknown) => {
    recorded.push(raw);
    return { event: { kind: "error" }, decision: { action: "allow", enforced: false } };
  },
} as unknown as MessageHandler;

function flowAt(path: string, legacy?: { key: string; endpointPath: string }): McpFlow {
  const server = `127.0.0.1:${port}`;
  return {
    server,
    transport: legacy ? "http+sse" : "streamable-http",
    legacy,
    ex: {
      server: { host: "127.0.0.1", port, secure: false },
      request: { path, headers: { host: "127.0.0.1:1", authorization: "Bearer t0ken", "mcp-session-id": "s-1", "content-length": "99", accept: "text/event-stream", "last-event-id": "7", "mcp-method": "tools/call", "mcp-name": "echo", "mcp-param-region": "eu" } },
    },
    context: () => ({}),
  } as unknown as McpFlow;
}

const answer = { jsonrpc: "2.0", id: 5, error: { code: -32054, message: "mcp-wiretap: dropped at the proxy by the person intercepting it" } };

describe("ServerAnswers", () => {
  it("POSTs exactly the recorded answer to the stream's endpoint with the client's headers of that exchange", async () => {
    const failures: string[] = [];
    await new ServerAnswers({ upstreamCa: [], insecureUpstream: false }).send(pipeline, flowAt("/mcp"), answer, (w) => failures.push(w));
    expect(failures).toEqual([]);
    const post = seen.at(-1)!;
    expect(post.path).toBe("/mcp");
    expect(JSON.parse(post.body)).toEqual(answer);
    expect(recorded.at(-1)).toEqual(answer);
    expect(post.headers).toMatchObject({ authorization: "Bearer t0ken", "mcp-session-id": "s-1", "content-type": "application/json", accept: "application/json, text/event-stream", "content-length": String(post.body.length), host: `127.0.0.1:${port}` });
    expect(post.headers["last-event-id"]).toBeUndefined();
    // The client's message's own routing headers describe that message, not this answer.
    expect(Object.keys(post.headers).filter((h) => h.startsWith("mcp-") && h !== "mcp-session-id")).toEqual([]);
  });

  it("legacy HTTP+SSE: to the session's endpoint; one on another host or port is never written to", async () => {
    const answers = new ServerAnswers({ upstreamCa: [], insecureUpstream: false });
    await answers.send(pipeline, flowAt("/sse", { key: `127.0.0.1:${port}/message?sessionId=a`, endpointPath: "/message?sessionId=a" }), answer, () => undefined);
    expect(seen.at(-1)!.path).toBe("/message?sessionId=a");
    const before = seen.length;
    const failures: string[] = [];
    await answers.send(pipeline, flowAt("/sse", { key: "evil.example:80/message?sessionId=a", endpointPath: "/message?sessionId=a" }), answer, (w) => failures.push(w));
    expect(seen.length).toBe(before);
    expect(failures[0]).toMatch(/endpoint on the stream's server is not known/);
  });

  it("a refusal and a server that never answers are reported; answers in flight to one server are capped", async () => {
    const answers = new ServerAnswers({ upstreamCa: [], insecureUpstream: false, timeoutMs: 300, maxPerServer: 1 });
    const failures: string[] = [];
    await answers.send(pipeline, flowAt("/refuse"), answer, (w) => failures.push(w));
    expect(failures.pop()).toMatch(/HTTP 500/);
    const slow = answers.send(pipeline, flowAt("/park"), answer, (w) => failures.push(w));
    await answers.send(pipeline, flowAt("/mcp"), answer, (w) => failures.push(w));
    expect(failures.pop()).toMatch(/1 answers of the proxy to this server already in flight/);
    await slow;
    expect(failures.pop()).toMatch(/no answer within 300 ms/);
    // Its place is free again.
    await answers.send(pipeline, flowAt("/mcp"), answer, (w) => failures.push(w));
    expect(failures).toEqual([]);
  });
});
