/**
 * A body of an MCP exchange the enforcing proxy judged nothing of: before, the request hold and the
 * whole-body and event rewriters acted on what the judgement left behind in a list, so a stage that failed
 * for every message of a body (here: the record output, and then the record of the failure too) let the
 * body reach its receiver unchanged. Enforce mode now refuses such a body with a record saying why (or a
 * 502 when even that record fails); monitor mode still passes it on.
 */
import http from "node:http";
import { describe, expect, it } from "vitest";
import { loopbackServers } from "../../helpers/loopback.js";
import { AddonChain } from "../../../src/proxy/addon-chain.js";
import { forwardExchange, type Upstream } from "../../../src/proxy/forward.js";
import { requestFraming } from "../../../src/proxy/framing.js";
import { mcpAddon } from "../../../src/mcp/addon.js";
import { MessagePipeline } from "../../../src/pipeline/message-pipeline.js";
import type { RpcEvent } from "../../../src/mcp/rpc-event.js";

const listen = loopbackServers();

const POISONED = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"poisoned"}]}}';

/** An upstream answering every POST with the poisoned result, as JSON or as one event. */
function upstream(type: "json" | "sse"): Promise<number> {
  return listen((req, res) => {
    req.resume();
    req.on("end", () => {
      if (type === "json") res.writeHead(200, { "content-type": "application/json" }).end(POISONED);
      else res.writeHead(200, { "content-type": "text/event-stream" }).end(`event: message\ndata: ${POISONED}\n\n`);
    });
  });
}

/**
 * The MCP addon behind an allow-all policy, whose record output throws for the first `failures` records of
 * server messages (`Infinity`: always).
 */
async function proxy(upstreamPort: number, mode: "enforce" | "monitor", failures: number, records: RpcEvent[], failing: RpcEvent["direction"] = "server_to_client"): Promise<number> {
  let failed = 0;
  const pipeline = new MessagePipeline({
    policy: { enforcing: mode === "enforce", decide: () => ({ action: "allow", enforced: false, rules: [] }), judge: () => ({ action: "allow", enforced: false, rules: [] }) },
    removeDeniedTools: true,
    payloads: { payloads: "truncated", maxPayloadBytes: 1000 },
    limits: { maxPending: 10, maxSessions: 10 },
    output: {
      rpc: (_record, _loud, _hidden, e) => {
        if (e.direction === failing && failed < failures) {
          failed++;
          throw new Error("record output broke");
        }
        records.push(e);
      },
      session: () => {},
    },
  });
  const enforce = mode === "enforce" ? { enforce: { maxInspectBytes: 1 << 20, removeDeniedTools: true } } : {};
  const chain = new AddonChain([mcpAddon(pipeline, { maxInspectBytes: 1 << 20, ...enforce })], () => {});
  const up: Upstream = { httpAgent: new http.Agent(), httpsAgent: undefined as never, insecure: false, connectTimeoutMs: 2000 };
  return listen((req, res) => {
    const framed = requestFraming(req);
    if (!framed.ok) throw new Error(framed.reason);
    forwardExchange(chain, up, { mode: "reverse", target: { host: "127.0.0.1", port: upstreamPort }, secure: false, client: { address: "127.0.0.1", port: 0, tls: null }, path: req.url ?? "/" }, req, res, { framing: framed.framing });
  });
}

async function call(port: number): Promise<{ status: number; text: string }> {
  const body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup","arguments":{}}}';
  try {
    const res = await fetch(`http://127.0.0.1:${port}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body });
    return { status: res.status, text: await res.text() };
  } catch (err) {
    return { status: 0, text: String(err) };
  }
}

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 50));

describe("a response of which no message was judged", () => {
  for (const type of ["json", "sse"] as const) {
    it(`(${type}) is refused in enforce mode, with a record saying why`, async () => {
      const records: RpcEvent[] = [];
      // The message's record and the record of its failure both fail: nothing of the body is judged.
      const port = await proxy(await upstream(type), "enforce", 2, records);
      const answer = await call(port);
      await settle();
      expect(answer.text).not.toContain("poisoned");
      // A JSON body: each request gets the error instead; an event: dropped, as an unreadable event is.
      expect(answer.text).toContain(type === "json" ? "-32052" : "policy blocked a message");
      const why = records.find((e) => e.direction === "server_to_client" && e.kind === "invalid");
      expect(why?.reason).toMatch(/no message of it was judged/);
      expect(why?.decision).toMatchObject({ action: "deny", enforced: true });
    });

    it(`(${type}) is not passed on in enforce mode when not even that can be recorded`, async () => {
      const port = await proxy(await upstream(type), "enforce", Infinity, []);
      const answer = await call(port);
      await settle();
      expect(answer.text).not.toContain("poisoned");
      if (type === "json") expect(answer.status).toBe(502);
    });

    it(`(${type}) is passed on in monitor mode`, async () => {
      const port = await proxy(await upstream(type), "monitor", Infinity, []);
      const answer = await call(port);
      await settle();
      expect(answer.status).toBe(200);
      expect(answer.text).toContain("poisoned");
    });
  }
});

describe("a request of which no message was judged", () => {
  for (const mode of ["enforce", "monitor"] as const) {
    it(`is ${mode === "enforce" ? "refused, never forwarded, with a record saying why" : "forwarded"} (${mode} mode)`, async () => {
      let reached = 0;
      const upstreamPort = await listen((req, res) => {
        reached++;
        req.resume();
        req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":1,"result":{}}'));
      });
      const records: RpcEvent[] = [];
      const port = await proxy(upstreamPort, mode, 2, records, "client_to_server");
      const answer = await call(port);
      await settle();
      if (mode === "monitor") {
        expect(reached).toBe(1);
        return;
      }
      expect(reached).toBe(0);
      expect(JSON.parse(answer.text)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32052 } });
      const why = records.find((e) => e.direction === "client_to_server" && e.kind === "invalid");
      expect(why?.reason).toMatch(/no message of it was judged/);
      expect(why?.decision).toMatchObject({ action: "deny", enforced: true });
    });
  }
});
