import http from "node:http";
import { describe, expect, it } from "vitest";
import { loopbackServers } from "../helpers/loopback.js";
import { AddonChain } from "../../src/proxy/addon-chain.js";
import type { Addon, RequestVerdict } from "../../src/proxy/exchange.js";
import { forwardExchange, type Upstream } from "../../src/proxy/forward.js";
import { requestFraming } from "../../src/proxy/framing.js";
import { mcpAddon } from "../../src/mcp/addon.js";
import { MessagePipeline } from "../../src/pipeline/message-pipeline.js";
import type { RpcEvent } from "../../src/mcp/rpc-event.js";

const listen = loopbackServers();

/** A front server that forwards through `forwardExchange` with one enforcing addon. */
async function proxyWith(addon: Addon, upstreamPort: number): Promise<number> {
  const chain = new AddonChain([addon], () => {});
  const upstream: Upstream = { httpAgent: new http.Agent(), httpsAgent: undefined as never, insecure: false, connectTimeoutMs: 2000 };
  return listen((req, res) => {
    const framed = requestFraming(req);
    if (!framed.ok) throw new Error(framed.reason);
    forwardExchange(chain, upstream, { mode: "reverse", target: { host: "127.0.0.1", port: upstreamPort }, secure: false, client: { address: "127.0.0.1", port: 0, tls: null }, path: req.url ?? "/" }, req, res, { framing: framed.framing });
  });
}

async function post(port: number, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: res.status, text: await res.text() };
}

describe("a held request whose judgement fails", () => {
  for (const [name, size] of [["whole body", 10], ["body past the hold limit", 64]] as const) {
    it(`is not forwarded (${name})`, async () => {
      let reached = 0;
      const upstreamPort = await listen((req, res) => {
        reached++;
        req.resume();
        res.end("ran");
      });
      const decide = (): Promise<RequestVerdict> => Promise.reject(new Error("judge broke"));
      const port = await proxyWith({ name: "hold", requestHeaders: (ex) => ex.holdRequest({ maxBytes: 16, decide }) }, upstreamPort);
      const answer = await post(port, "x".repeat(size));
      expect(reached).toBe(0);
      expect(answer.status).toBe(500);
      expect(answer.text).toMatch(/could not be judged/);
    });
  }
});

describe("a response whose judgement fails", () => {
  it("is not passed on (whole JSON body)", async () => {
    const upstreamPort = await listen((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":1,"result":{"poisoned":true}}');
    });
    const rewrite = (): Promise<Buffer | null> => Promise.reject(new Error("judge broke"));
    const port = await proxyWith({ name: "rewrite", responseHeaders: (ex) => void ex.rewriteResponse({ kind: "whole", maxBytes: 1 << 20, rewrite }) }, upstreamPort);
    const answer = await post(port, "{}");
    expect(answer.text).not.toContain("poisoned");
    expect(answer.status).toBe(502);
    expect(answer.text).toMatch(/could not be judged/);
  });

  it("is not passed on (an event of a stream)", async () => {
    const upstreamPort = await listen((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"fine":true}}\n\n');
      res.end('event: message\ndata: {"jsonrpc":"2.0","id":2,"result":{"poisoned":true}}\n\n');
    });
    const event = (raw: Buffer): Buffer => {
      if (raw.includes("poisoned")) throw new Error("judge broke");
      return raw;
    };
    const port = await proxyWith({ name: "rewrite", responseHeaders: (ex) => void ex.rewriteResponse({ kind: "events", maxEventBytes: 1 << 20, event }) }, upstreamPort);
    const answer = await post(port, "{}").catch((err: Error) => ({ status: 0, text: String(err) }));
    expect(answer.text).not.toContain("poisoned");
  });
});

describe("an MCP message whose judgement throws", () => {
  /** The MCP addon in enforce mode behind an allow-all policy; `fail` says which stage throws on `tools/call`. */
  function mcpProxy(upstreamPort: number, records: RpcEvent[], fail: "policy" | "record"): Promise<number> {
    const judge = (e: RpcEvent) => {
      if (fail === "policy" && e.method === "tools/call") throw new Error("judge broke");
      return { action: "allow" as const, enforced: false, rules: [] };
    };
    const policy = { enforcing: true, decide: judge, judge };
    const pipeline = new MessagePipeline({
      policy,
      removeDeniedTools: true,
      payloads: { payloads: "truncated", maxPayloadBytes: 1000 },
      limits: { maxPending: 10, maxSessions: 10 },
      output: {
        rpc: (record, _loud, _hidden, e) => {
          if (fail === "record" && e.method === "tools/call") throw new Error("log broke");
          records.push(e);
        },
        session: () => {},
      },
    });
    return proxyWith(mcpAddon(pipeline, { maxInspectBytes: 1 << 20, enforce: { maxInspectBytes: 1 << 20, removeDeniedTools: true } }), upstreamPort);
  }

  for (const fail of ["policy", "record"] as const) {
    it(`(${fail} stage) is refused with its own error and recorded, never forwarded`, async () => {
      let reached = 0;
      const upstreamPort = await listen((req, res) => {
        reached++;
        req.resume();
        res.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":2,"result":{}}');
      });
      const records: RpcEvent[] = [];
      const port = await mcpProxy(upstreamPort, records, fail);
      const answer = await post(port, '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rm","arguments":{}}}');
      expect(reached).toBe(0);
      // A policy that throws: "could not judge" (-32053); a stage after it that throws: the body is unreadable (-32052).
      expect(JSON.parse(answer.text)).toMatchObject({ id: fail === "policy" ? 1 : null, error: { code: fail === "policy" ? -32053 : -32052 } });
      expect(records.find((r) => r.decision?.enforced === true)).toMatchObject(fail === "policy" ? { kind: "request", method: "tools/call" } : { kind: "invalid" });
      // Other messages still pass.
      const ping = await post(port, '{"jsonrpc":"2.0","id":2,"method":"ping"}');
      expect(ping.status).toBe(200);
      expect(reached).toBe(1);
      await new Promise((r) => setTimeout(r, 50));
    });
  }
});
