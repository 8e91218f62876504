/**
 * `--intercept` on a request a server sends over HTTP (server-everything's `trigger-sampling-request` asks the
 * client for `sampling/createMessage` on the tool call's event stream): dropped, the server must hear so at
 * once (error -32054 POSTed back to it by the proxy), not wait for its own timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { connectSse, connectStreamable, type ConnectedClient } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { openUi, release, waitHeld, type UiSession } from "./ui-client.js";

let upstream: McpUpstream;
let proxy: TestProxy;
let ui: UiSession;
const clients: ConnectedClient<unknown>[] = [];

beforeAll(async () => {
  upstream = await startMcpUpstream();
  proxy = await startTestProxy({ uiPort: 0, payloads: "full", intercept: { filter: "method:sampling/createMessage", timeoutMs: 1_000 } });
  const url = /UI: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(proxy.banner)?.[1];
  ui = await openUi(url!);
}, 30_000);

afterAll(async () => {
  for (const c of clients) await c.close();
  await proxy?.stop();
  await upstream?.close();
});

async function samplingClient(transport: "streamable" | "sse"): Promise<ConnectedClient<unknown>> {
  const opts = { proxyUrl: proxy.url, caPem: proxy.caPem, clientOptions: { capabilities: { sampling: {} } } };
  const c = transport === "streamable" ? await connectStreamable(upstream.streamableUrl, opts) : await connectSse(upstream.sseUrl, opts);
  // Never reached when the request is dropped at the proxy.
  c.client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: "assistant", content: { type: "text", text: "sampled" }, model: "test" }));
  clients.push(c);
  return c;
}

/** What the tool's caller sees: server-everything reports the failed sampling request as the call's error. */
async function callOutcome(c: ConnectedClient<unknown>): Promise<string> {
  // The SDK server's own wait for an answer is 60 s; a drop answered at the proxy ends the call long before.
  return c.client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi" } }, undefined, { timeout: 8_000 }).then(
    (r) => JSON.stringify(r),
    (e: unknown) => String(e),
  );
}

describe.each(["streamable", "sse"] as const)("--intercept: a server's request dropped over HTTP (%s)", (transport) => {
  it("a person's drop reaches the server as error -32054, POSTed by the proxy and recorded", async () => {
    const c = await samplingClient(transport);
    const outcome = callOutcome(c);
    const [held] = await waitHeld(ui);
    expect(held).toMatchObject({ direction: "server_to_client", method: "sampling/createMessage" });
    expect((await release(ui, { hold: held!.hold, action: "drop" })).status).toBe(200);
    expect(await outcome).toMatch(/dropped at the proxy by the person intercepting it/);
    const answer = await proxy.waitForRecord((r) => r.event === "rpc" && r.direction === "client_to_server" && r.kind === "error" && r.method === "sampling/createMessage");
    expect(answer).toMatchObject({ proxyAnswer: true, error: { code: -32054 } });
  }, 15_000);

  it("one nobody releases within --intercept-timeout reaches the server as the timeout's -32054", async () => {
    const c = await samplingClient(transport);
    expect(await callOutcome(c)).toMatch(/not released within the intercept timeout/);
  }, 15_000);
});
