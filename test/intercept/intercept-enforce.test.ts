/**
 * `--intercept` in enforce mode: an edit is judged by the policy again, and one the policy denies never reaches
 * the server (the client gets the policy error). Over legacy HTTP+SSE too: a dropped POST is answered on the
 * session's event stream. The official SDK client and server-everything, through the proxy (real TLS).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectSse, connectStreamable, type ConnectedClient } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { openUi, release, waitHeld, type UiSession } from "./ui-client.js";

let dir: string;
let upstream: McpUpstream;
let proxy: TestProxy;
let ui: UiSession;
const clients: ConnectedClient<unknown>[] = [];

const POLICY = `mode: enforce
rules:
  - name: no-forbidden-echo
    action: deny
    reason: not that message
    match: { tool: echo, args: { message: "re:forbidden" } }
`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-intercept-"));
  await writeFile(path.join(dir, "policy.yaml"), POLICY);
  upstream = await startMcpUpstream();
  proxy = await startTestProxy({ config: path.join(dir, "policy.yaml"), uiPort: 0, payloads: "full", intercept: { filter: "tool:echo dir:client", timeoutMs: 10_000 } });
  ui = await openUi(/UI: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(proxy.banner)![1]!);
}, 30_000);

afterAll(async () => {
  for (const c of clients) await c.client.close();
  await proxy?.stop();
  await upstream?.close();
  await rm(dir, { recursive: true, force: true });
});

const failure = (p: Promise<unknown>): Promise<{ code?: number; message: string } | null> =>
  p.then(
    () => null,
    (e: { code?: number; message: string }) => e,
  );

describe("--intercept in enforce mode", () => {
  it("an edit the policy denies is refused with the policy error and never reaches the server", async () => {
    const c = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    clients.push(c);
    const before = upstream.counters.toolCallsByName.get("echo") ?? 0;
    const call = failure(c.client.callTool({ name: "echo", arguments: { message: "harmless" } }));
    const [held] = await waitHeld(ui);
    const edited = structuredClone(held!.message) as { params: { arguments: { message: string } } };
    edited.params.arguments.message = "something forbidden";
    expect((await release(ui, { hold: held!.hold, action: "edit", message: edited })).status).toBe(200);
    const err = await call;
    expect(err?.code).toBe(-32051);
    expect(err?.message).toContain("no-forbidden-echo");
    expect(upstream.counters.toolCallsByName.get("echo") ?? 0).toBe(before);
    const denied = await proxy.waitForRecord((r) => r.event === "rpc" && r.kind === "request" && JSON.stringify(r.params).includes("something forbidden"));
    expect(denied.decision).toMatchObject({ action: "deny", enforced: true });
  });

  it("over legacy HTTP+SSE a dropped call is answered on the session's stream with -32054", async () => {
    const c = await connectSse(upstream.sseUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    clients.push(c);
    const call = failure(c.client.callTool({ name: "echo", arguments: { message: "over legacy SSE" } }));
    const [held] = await waitHeld(ui);
    expect(held).toMatchObject({ direction: "client_to_server", tool: "echo" });
    expect((await release(ui, { hold: held!.hold, action: "drop" })).status).toBe(200);
    expect((await call)?.code).toBe(-32054);
  });
});
