/**
 * The end of an MCP exchange writes records of its own (a body no decoder read, requests left unanswered):
 * a stage that throws there is reported as an `addon_error` of that exchange, and the records after it are
 * still written.
 */
import http from "node:http";
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { loopbackServers } from "../helpers/loopback.js";
import { waitUntil } from "../helpers/wait-until.js";
import { mcpAddon } from "../../src/mcp/addon.js";
import { MessagePipeline } from "../../src/pipeline/message-pipeline.js";
import { ProxyServer } from "../../src/proxy/server.js";
import { httpRecordAddon } from "../../src/records/http-record.js";
import { recordProxyEvents } from "../../src/records/proxy-records.js";

const listen = loopbackServers();
let server: ProxyServer | undefined;
afterEach(async () => {
  await server?.close(100);
  server = undefined;
});

type Line = Record<string, unknown>;

/** A proxy whose MCP records go to `rpc` (which may throw), every other record to `lines`. */
async function proxy(lines: Line[], rpc: (record: Line) => void): Promise<number> {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line) lines.push(JSON.parse(line) as Line);
      done();
    },
  });
  const logger = pino({ base: undefined }, sink);
  const pipeline = new MessagePipeline({
    policy: { enforcing: false, decide: () => ({ action: "allow", enforced: false, rules: [] }), judge: () => ({ action: "allow", enforced: false, rules: [] }) },
    removeDeniedTools: false,
    payloads: { payloads: "none", maxPayloadBytes: 0 },
    limits: { maxPending: 10, maxSessions: 10 },
    output: { rpc: (record) => rpc(record), session: () => {} },
  });
  server = new ProxyServer({
    host: "127.0.0.1",
    port: 0,
    report: recordProxyEvents(logger),
    addons: [mcpAddon(pipeline, { maxInspectBytes: 1 << 20 }), httpRecordAddon(logger)],
    secureContextFor: () => {
      throw new Error("no TLS in this test");
    },
    upstreamCa: [],
    insecureUpstream: false,
    passthrough: [],
  });
  return (await server.listen()).port;
}

/** One MCP POST sent to the proxy as an absolute-URI request. */
function post(proxyPort: number, upstreamPort: number, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: "127.0.0.1",
      port: proxyPort,
      method: "POST",
      path: `http://127.0.0.1:${upstreamPort}/mcp`,
      headers: { host: `127.0.0.1:${upstreamPort}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      agent: false,
    });
    req.on("error", reject);
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.end(body);
  });
}

describe("a stage that throws at the end of an MCP exchange", () => {
  it("is an addon_error record of that exchange, and the requests left unanswered are still recorded", async () => {
    // A 200 answer in plain text: the exchange's end records it as unread, then gives up on the call.
    const upstreamPort = await listen((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/plain" }).end("not JSON-RPC");
    });
    const lines: Line[] = [];
    const rpc: Line[] = [];
    const port = await proxy(lines, (record) => {
      if (record.kind === "invalid") throw new Error("record stage broke");
      rpc.push(record);
    });
    expect(await post(port, upstreamPort, '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}')).toBe(200);
    await waitUntil(() => lines.some((l) => l.event === "addon_error") && rpc.some((r) => r.kind === "unanswered"), { what: "the failure and the unanswered call" });
    const http = lines.find((l) => l.event === "http");
    expect(lines.find((l) => l.event === "addon_error")).toMatchObject({ level: 50, addon: "mcp", hook: "exchangeEnd", flow: http?.flow, err: "Error: record stage broke" });
    expect(rpc.find((r) => r.kind === "unanswered")).toMatchObject({ flow: http?.flow, id: 7, method: "tools/call" });
  });
});
