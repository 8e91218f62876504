/**
 * `--intercept` over Streamable HTTP: the official SDK client calls server-everything's `echo` through the proxy
 * (real TLS); the call waits in the hold queue until released through the UI server's API, as the page does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetch } from "undici";
import { connectStreamable, createDispatcher, type ConnectedClient } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { accepted, json, rpcResult, startScriptedUpstream, type ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { heldList, openUi, release, waitHeld, type UiSession } from "./ui-client.js";

let upstream: McpUpstream;
let proxy: TestProxy;
let client: ConnectedClient<unknown>;
let ui: UiSession;
let jsonServer: ScriptedUpstream;
let jsonClient: ConnectedClient<unknown>;

const TIMEOUT_MS = 3_000;

beforeAll(async () => {
  upstream = await startMcpUpstream();
  proxy = await startTestProxy({ uiPort: 0, payloads: "full", intercept: { filter: "tool:echo", timeoutMs: TIMEOUT_MS } });
  const url = /UI: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(proxy.banner)?.[1];
  ui = await openUi(url!);
  client = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
}, 30_000);

afterAll(async () => {
  await client?.client.close();
  await jsonClient?.client.close();
  await jsonServer?.close();
  await proxy?.stop();
  await upstream?.close();
});

const echo = (message: string) => client.client.callTool({ name: "echo", arguments: { message } });
const text = (result: unknown): string => ((result as { content: { text: string }[] }).content[0]?.text ?? "");

describe("--intercept on HTTP request bodies", () => {
  it("holds an echo call until it is forwarded; what is not selected (tools/list) is never held", async () => {
    await client.client.listTools();
    const call = echo("as sent");
    const [held] = await waitHeld(ui);
    expect(held).toMatchObject({ direction: "client_to_server", method: "tools/call", tool: "echo" });
    expect(held!.message).toMatchObject({ params: { name: "echo", arguments: { message: "as sent" } } });
    const before = upstream.counters.toolCallsByName.get("echo") ?? 0;
    // Held: the server has not seen it.
    await new Promise((r) => setTimeout(r, 100));
    expect(upstream.counters.toolCallsByName.get("echo") ?? 0).toBe(before);
    expect((await release(ui, { hold: held!.hold, action: "forward" })).status).toBe(200);
    // Its answer comes in an SSE event (server-everything answers on an event stream): held too.
    const [answer] = await waitHeld(ui);
    expect(answer).toMatchObject({ direction: "server_to_client", tool: "echo", message: { result: { content: [{ text: "Echo: as sent" }] } } });
    expect((await release(ui, { hold: answer!.hold, action: "forward" })).status).toBe(200);
    expect(text(await call)).toBe("Echo: as sent");
    const records = await proxy.waitForRecords((r) => r.event === "intercept", 2);
    expect(records.map((r) => [r.direction, r.action, r.tool])).toEqual([
      ["client_to_server", "forwarded", "echo"],
      ["server_to_client", "forwarded", "echo"],
    ]);
  });

  it("an edit reaches the server as judged and recorded: the server echoes the edit, and the edit has its own rpc record", async () => {
    const call = echo("original");
    const [held] = await waitHeld(ui);
    const edited = structuredClone(held!.message) as { params: { arguments: { message: string } } };
    edited.params.arguments.message = "edited at the proxy";
    expect((await release(ui, { hold: held!.hold, action: "edit", message: edited })).status).toBe(200);
    // The server's own reading of what it received is its echo (in the answer, held in turn: an SSE event edited).
    const [answer] = await waitHeld(ui);
    expect(answer!.message).toMatchObject({ result: { content: [{ text: "Echo: edited at the proxy" }] } });
    const out = structuredClone(answer!.message) as { result: { content: { text: string }[] } };
    out.result.content[0]!.text = "Echo: edited at the proxy, and on the way back";
    expect((await release(ui, { hold: answer!.hold, action: "edit", message: out })).status).toBe(200);
    expect(text(await call)).toBe("Echo: edited at the proxy, and on the way back");
    const record = await proxy.waitForRecord((r) => r.event === "intercept" && r.action === "edited");
    expect(record.message).toMatchObject({ params: { arguments: { message: "original" } } });
    expect(record.edited).toMatchObject({ params: { arguments: { message: "edited at the proxy" } } });
    const calls = (await proxy.records()).filter((r) => r.event === "rpc" && r.tool === "echo" && r.kind === "request");
    expect(calls.map((r) => (r.params as { arguments: { message: string } }).arguments.message)).toContain("edited at the proxy");
    const answers = await proxy.waitForRecords((r) => r.event === "rpc" && r.kind === "response" && JSON.stringify(r.result).includes("edited at the proxy"), 2);
    // The server's answer, then the edit that went out: both the answer to the call (no "no pending request").
    expect(answers.map((r) => [r.tool, r.reason])).toEqual([
      ["echo", undefined],
      ["echo", undefined],
    ]);
  });

  it("a drop answers the client with error -32054 and the server never sees the call", async () => {
    const before = upstream.counters.toolCallsByName.get("echo") ?? 0;
    const call = echo("to drop").then(
      () => null,
      (err: { code?: number; message: string }) => err,
    );
    const [held] = await waitHeld(ui);
    expect((await release(ui, { hold: held!.hold, action: "drop" })).status).toBe(200);
    const err = await call;
    expect(err?.code).toBe(-32054);
    expect(err?.message).toMatch(/dropped at the proxy/);
    expect(upstream.counters.toolCallsByName.get("echo") ?? 0).toBe(before);
    await proxy.waitForRecord((r) => r.event === "intercept" && r.action === "dropped" && r.level === "warn");
  });

  it("a call nobody releases is dropped after --intercept-timeout (fail closed)", async () => {
    const before = upstream.counters.toolCallsByName.get("echo") ?? 0;
    const started = Date.now();
    const err = await echo("nobody looks").then(
      () => null,
      (e: { code?: number; message: string }) => e,
    );
    expect(err?.code).toBe(-32054);
    expect(err?.message).toMatch(/intercept timeout/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(upstream.counters.toolCallsByName.get("echo") ?? 0).toBe(before);
    const record = await proxy.waitForRecord((r) => r.event === "intercept" && r.action === "timeout");
    expect(record.heldMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  }, 15_000);

  it("a held call whose client goes away is dropped at once: it no longer takes a place in the queue", async () => {
    const abort = new AbortController();
    const body = JSON.stringify({ jsonrpc: "2.0", id: 77, method: "tools/call", params: { name: "echo", arguments: { message: "then gone" } } });
    const sent = fetch(upstream.streamableUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body,
      signal: abort.signal,
      dispatcher: createDispatcher({ proxyUrl: proxy.url, caPem: proxy.caPem }),
    }).catch(() => null);
    await waitHeld(ui);
    abort.abort();
    await sent;
    const record = await proxy.waitForRecord((r) => r.event === "intercept" && r.id === 77);
    expect(record).toMatchObject({ action: "dropped" });
    expect(String(record.reason)).toMatch(/exchange ended/);
    expect(await heldList(ui)).toEqual([]);
  });

  it("a release of a message no longer held is refused with 409", async () => {
    expect((await release(ui, { hold: "999999", action: "forward" })).status).toBe(409);
  });
});

describe("--intercept on HTTP JSON responses (a server that answers application/json)", () => {
  beforeAll(async () => {
    jsonServer = await startScriptedUpstream();
    jsonServer.route("GET", "/mcp", (_req, res) => {
      res.writeHead(405);
      res.end();
    });
    jsonServer.route("POST", "/mcp", (req, res) => {
      const m = req.json as { id?: number; method: string; params?: { arguments?: { message?: string } } };
      if (m.id === undefined) return accepted(res);
      if (m.method === "initialize") return json(res, rpcResult(m.id, { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "json-server", version: "1.0.0" } }));
      return json(res, rpcResult(m.id, { content: [{ type: "text", text: `Echo: ${m.params?.arguments?.message ?? ""}` }] }));
    });
    jsonClient = await connectStreamable(`${jsonServer.url}/mcp`, { proxyUrl: proxy.url, caPem: proxy.caPem });
  });

  it("holds the answer too (tool:echo selects it): an edited answer is what the client reads, judged and recorded", async () => {
    const call = jsonClient.client.callTool({ name: "echo", arguments: { message: "to a JSON server" } });
    const [request] = await waitHeld(ui);
    expect(request).toMatchObject({ direction: "client_to_server", tool: "echo" });
    expect((await release(ui, { hold: request!.hold, action: "forward" })).status).toBe(200);
    const [answer] = await waitHeld(ui);
    expect(answer).toMatchObject({ direction: "server_to_client", tool: "echo", message: { result: { content: [{ text: "Echo: to a JSON server" }] } } });
    const edited = structuredClone(answer!.message) as { result: { content: { text: string }[] } };
    edited.result.content[0]!.text = "answer edited at the proxy";
    expect((await release(ui, { hold: answer!.hold, action: "edit", message: edited })).status).toBe(200);
    expect(text(await call)).toBe("answer edited at the proxy");
    const responses = (await proxy.records()).filter((r) => r.event === "rpc" && r.kind === "response" && r.tool === "echo" && r.server === jsonServer.server);
    // What arrived, then what went out: both answers of request the client sent, the edit with its latency.
    expect(responses.map((r) => (r.result as { content: { text: string }[] }).content[0]!.text)).toEqual(["Echo: to a JSON server", "answer edited at the proxy"]);
    expect(responses[1]!.reason).toBeUndefined();
  });

  it("a dropped answer reaches the client as error -32054", async () => {
    const call = jsonClient.client.callTool({ name: "echo", arguments: { message: "answer to drop" } }).then(
      () => null,
      (e: { code?: number; message: string }) => e,
    );
    const [request] = await waitHeld(ui);
    expect((await release(ui, { hold: request!.hold, action: "forward" })).status).toBe(200);
    const [answer] = await waitHeld(ui);
    expect(answer!.direction).toBe("server_to_client");
    expect((await release(ui, { hold: answer!.hold, action: "drop" })).status).toBe(200);
    expect((await call)?.code).toBe(-32054);
  });
});
