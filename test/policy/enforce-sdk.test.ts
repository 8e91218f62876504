/**
 * Enforce mode end to end: the official SDK client talks to server-everything through the proxy, over
 * Streamable HTTP and legacy HTTP+SSE. A denied call never reaches the upstream, the client gets a
 * JSON-RPC error -32051 naming the rule, and the session carries on. With every shipped detector set to
 * deny, an ordinary session is not blocked at all.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectSse, connectStreamable } from "../helpers/mcp-client.js";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.js";
import { type LogRecord, REPO_ROOT, type TestProxy, startTestProxy } from "../helpers/proxy-harness.js";
import { parsePolicy } from "../../src/policy/load-config.js";
import { tempDir, writePolicyFile } from "./policy-fixtures.js";

const AWS_KEY_ID = ["AKIA", "Q7ZT3M5K2W9R4X6B"].join("");

const ENFORCE_POLICY = `mode: enforce
rules:
  - name: no-env
    action: deny
    reason: dumps the server's environment
    match: { method: tools/call, tool: get-env }
detectors: { secrets: deny }
`;

const isRpc = (r: LogRecord): boolean => r.event === "rpc";
const gets = (u: McpUpstream, tool: string): number => u.counters.toolCallsByName.get(tool) ?? 0;

async function expectPolicyError(p: Promise<unknown>, rule: string): Promise<McpError> {
  const err = await p.then(
    () => {
      throw new Error("expected the call to be refused");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  const mcp = err as McpError;
  expect(mcp.code).toBe(-32051);
  expect(mcp.message).toContain(`blocked by mcp-wiretap policy: ${rule}`);
  return mcp;
}

describe("enforce mode with the SDK client and server-everything", () => {
  let upstream: McpUpstream;
  let proxy: TestProxy;
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    tmp = tempDir();
    upstream = await startMcpUpstream();
    proxy = await startTestProxy({ config: writePolicyFile(tmp.dir, ENFORCE_POLICY) });
  });
  afterAll(async () => {
    await proxy?.stop();
    await upstream?.close();
    tmp?.cleanup();
  });

  it("Streamable HTTP: a denied tools/call never reaches the server, the client gets -32051 naming the rule, the session goes on", async () => {
    const c = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    try {
      const before = { env: gets(upstream, "get-env"), echo: gets(upstream, "echo") };
      const err = await expectPolicyError(c.client.callTool({ name: "get-env", arguments: {} }), "no-env");
      expect(err.data).toEqual({ rules: [{ name: "no-env", reason: "dumps the server's environment" }] });
      expect(gets(upstream, "get-env")).toBe(before.env);

      // A secret in the arguments is denied by the detector, the same way.
      await expectPolicyError(c.client.callTool({ name: "echo", arguments: { message: `use ${AWS_KEY_ID}` } }), "detector:secrets");
      expect(gets(upstream, "echo")).toBe(before.echo);

      // Allowed calls still work in the same session.
      const echo = await c.client.callTool({ name: "echo", arguments: { message: "still here" } });
      expect(echo.content).toEqual([{ type: "text", text: "Echo: still here" }]);
      const sum = await c.client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
      expect(JSON.stringify(sum.content)).toContain("5");
      expect(gets(upstream, "echo")).toBe(before.echo + 1);
      expect(gets(upstream, "get-env")).toBe(before.env);

      const denied = await proxy.waitForRecord((r) => isRpc(r) && r.tool === "get-env" && r.transport === "streamable-http", { what: "get-env record" });
      expect(denied).toMatchObject({
        level: "warn",
        direction: "client_to_server",
        kind: "request",
        method: "tools/call",
        decision: {
          action: "deny",
          enforced: true,
          effect: "not forwarded; the client got a policy error",
          rules: [{ name: "no-env", action: "deny", reason: "dumps the server's environment" }],
        },
      });
      const secret = await proxy.waitForRecord((r) => isRpc(r) && r.tool === "echo" && (r.decision as { action?: string } | undefined)?.action === "deny", { what: "secret echo record" });
      expect(secret.decision).toMatchObject({ enforced: true, rules: [{ name: "detector:secrets", action: "deny", findings: [{ type: "aws_access_key_id", path: "/params/arguments/message" }] }] });
      // Neither the finding nor the logged payload carries the secret.
      expect(JSON.stringify(secret.decision)).not.toContain(AWS_KEY_ID);
      expect(readFileSync(proxy.logFile, "utf8")).not.toContain(AWS_KEY_ID);
      // No answer from the server for the denied requests, and the proxy does not leave them "unanswered" either.
      const all = await proxy.records();
      const deniedIds = all.filter((r) => isRpc(r) && r.session === denied.session && r.kind === "request" && (r.decision as { enforced?: boolean }).enforced).map((r) => r.id);
      expect(deniedIds).toHaveLength(2);
      expect(all.filter((r) => isRpc(r) && r.session === denied.session && r.kind !== "request" && deniedIds.includes(r.id))).toEqual([]);
    } finally {
      await c.close();
    }
    await proxy.waitForRecord((r) => r.event === "session" && r.phase === "end" && r.transport === "streamable-http", { what: "session end" });
    const unanswered = (await proxy.records()).filter((r) => isRpc(r) && r.kind === "unanswered");
    expect(unanswered).toEqual([]);
  });

  it("legacy HTTP+SSE: the POST is acknowledged, the error arrives on the GET stream, the server never sees the call", async () => {
    const c = await connectSse(upstream.sseUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    try {
      const before = gets(upstream, "get-env");
      await expectPolicyError(c.client.callTool({ name: "get-env", arguments: {} }), "no-env");
      expect(gets(upstream, "get-env")).toBe(before);
      const echo = await c.client.callTool({ name: "echo", arguments: { message: "legacy ok" } });
      expect(echo.content).toEqual([{ type: "text", text: "Echo: legacy ok" }]);
      const denied = await proxy.waitForRecord((r) => isRpc(r) && r.tool === "get-env" && r.transport === "http+sse", { what: "legacy get-env record" });
      expect(denied.decision).toMatchObject({ action: "deny", enforced: true, effect: "not forwarded; the client got a policy error" });
      // The proxy answered the POST itself with 202.
      const http = await proxy.waitForRecord((r) => r.event === "http" && r.flow === denied.flow, { what: "the POST's http record" });
      expect(http).toMatchObject({ method: "POST", status: 202 });
    } finally {
      await c.close();
    }
  });

  it("bodies a lenient server reads otherwise (plain JSON labelled gzip; a bad UTF-8 byte) never reach server-everything", async () => {
    const call = (id: number, bad = false): Buffer => {
      const text = JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "get-env", arguments: { note: "x-y" } } });
      return bad ? Buffer.concat([Buffer.from(text.slice(0, text.indexOf("-y"))), Buffer.from([0xff]), Buffer.from(text.slice(text.indexOf("-y")))]) : Buffer.from(text);
    };
    const before = gets(upstream, "get-env");
    const s = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    try {
      const session = { "mcp-session-id": s.transport.sessionId!, "mcp-protocol-version": "2025-11-25", accept: "application/json, text/event-stream", "content-type": "application/json" };
      for (const [id, headers, body] of [
        [901, { "content-encoding": "gzip" }, call(901)],
        [902, {}, call(902, true)],
      ] as const) {
        const res = await request(upstream.streamableUrl, { method: "POST", dispatcher: s.dispatcher, headers: { ...session, ...headers }, body });
        const text = await res.body.text();
        expect(text).toContain('"code":-32052');
        expect(text).toContain(`"id":${id}`);
      }
      expect(gets(upstream, "get-env")).toBe(before);
      const echo = await s.client.callTool({ name: "echo", arguments: { message: "still fine" } });
      expect(echo.content).toEqual([{ type: "text", text: "Echo: still fine" }]);
    } finally {
      await s.close();
    }
    const c = await connectSse(upstream.sseUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    try {
      await c.client.callTool({ name: "echo", arguments: { message: "legacy" } });
      const endpoint = c.fetched.find((f) => f.startsWith("POST "))!.slice(5);
      const res = await request(endpoint, { method: "POST", dispatcher: c.dispatcher, headers: { "content-type": "application/json", "content-encoding": "gzip" }, body: call(903) });
      await res.body.text();
      expect(res.statusCode).toBe(202);
      const rec = await proxy.waitForRecord((r) => isRpc(r) && r.id === 903, { what: "legacy unreadable record" });
      expect(rec).toMatchObject({ transport: "http+sse", tool: "get-env", decision: { action: "deny", enforced: true } });
      expect(gets(upstream, "get-env")).toBe(before);
    } finally {
      await c.close();
    }
  });
});

describe("no false block: enforce mode, the shipped detectors all set to deny, an ordinary server-everything session", () => {
  let upstream: McpUpstream;
  let proxy: TestProxy;
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    tmp = tempDir();
    const shipped = readFileSync(path.join(REPO_ROOT, "config", "policy.yaml"), "utf8")
      .replace(/^mode: monitor/m, "mode: enforce")
      .replace(/^(\s+(?:secrets|pii|hiddenText|poisoning|toolPinning|schema|apps)): flag/gm, "$1: deny");
    expect(shipped).toMatch(/^mode: enforce/m);
    const parsed = parsePolicy(shipped, "shipped-enforce.yaml");
    expect(parsed.mode).toBe("enforce");
    expect(Object.values(parsed.detectors)).toEqual(Array(7).fill("deny"));
    upstream = await startMcpUpstream();
    proxy = await startTestProxy({ config: writePolicyFile(tmp.dir, shipped) });
  });
  afterAll(async () => {
    await proxy?.stop();
    await upstream?.close();
    tmp?.cleanup();
  });

  for (const transport of ["streamable", "sse"] as const) {
    it(`${transport}: initialize, tools/list, echo, get-sum, resources/list, prompts/list (and more) all go through`, async () => {
      const connect = transport === "streamable" ? connectStreamable : connectSse;
      const c = await connect(transport === "streamable" ? upstream.streamableUrl : upstream.sseUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
      try {
        const { tools } = await c.client.listTools();
        expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "get-sum", "get-env", "get-tiny-image"]));
        const echo = await c.client.callTool({ name: "echo", arguments: { message: "hello" } });
        expect(echo.content).toEqual([{ type: "text", text: "Echo: hello" }]);
        const sum = await c.client.callTool({ name: "get-sum", arguments: { a: 40, b: 2 } });
        expect(JSON.stringify(sum.content)).toContain("42");
        const image = await c.client.callTool({ name: "get-tiny-image", arguments: {} });
        expect(JSON.stringify(image.content)).toContain("image/png");
        const { resources } = await c.client.listResources();
        expect(resources.length).toBeGreaterThan(0);
        const { prompts } = await c.client.listPrompts();
        expect(prompts.length).toBeGreaterThan(0);
        await c.client.listResourceTemplates();
        await c.client.ping();
        // A little beyond the list: annotated and structured results, resource links, a resource, a prompt.
        await c.client.callTool({ name: "get-annotated-message", arguments: { messageType: "error", includeImage: true } });
        await c.client.callTool({ name: "get-structured-content", arguments: { location: "New York" } });
        await c.client.callTool({ name: "get-resource-links", arguments: { count: 3 } });
        const read = await c.client.readResource({ uri: resources[0]!.uri });
        expect(read.contents.length).toBeGreaterThan(0);
        const simple = prompts.find((p) => (p.arguments ?? []).every((a) => !a.required));
        if (simple) await c.client.getPrompt({ name: simple.name });
      } finally {
        await c.close();
      }
      const transportName = transport === "streamable" ? "streamable-http" : "http+sse";
      const rpcs = (await proxy.records()).filter((r) => isRpc(r) && r.transport === transportName);
      expect(rpcs.length).toBeGreaterThan(10);
      const notAllowed = rpcs.filter((r) => (r.decision as { action?: string } | undefined)?.action !== "allow");
      // On failure, this shows which detector fired, where, and why.
      expect(notAllowed.map((r) => ({ method: r.method, kind: r.kind, decision: r.decision }))).toEqual([]);
    });
  }
});
