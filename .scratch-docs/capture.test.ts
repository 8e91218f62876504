// Scratch: produces real log lines for docs/log-format.md. Not part of the suite; deleted afterwards.
import { copyFile, mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ProxyAgent, fetch } from "undici";
import { it } from "vitest";
import { connectSse, connectStreamable } from "../test/helpers/mcp-client.js";
import { startMcpUpstream } from "../test/helpers/mcp-upstream.js";
import { closedPort, curl, hasCurl, openTunnel, rawProxyExchange, rawRequest, readAll, startTestProxy, tlsThroughTunnel } from "../test/helpers/proxy-harness.js";
import { accepted, json, rpcResult, sseEvent, sseHead, startScriptedUpstream } from "../test/helpers/scripted-mcp-upstream.js";
import { startHttpsUpstream } from "../test/helpers/https-upstream.js";
import { selfSignedServerCert } from "../test/helpers/test-pki.js";

it("captures", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "capture-"));
  const logFile = path.join(dir, "a.ndjson");
  const mcp = await startMcpUpstream();
  const proxy = await startTestProxy({ logFile, payloads: "truncated", maxPayloadBytes: 300, passthrough: ["localhost"] });
  const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });

  // SDK streamable
  const c = await connectStreamable(mcp.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "claude-code" });
  await c.client.listTools();
  await c.client.callTool({ name: "echo", arguments: { message: "hello" } });
  await c.client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
  await c.client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 2 } }, undefined, { onprogress: () => undefined });
  await c.close();
  // legacy
  const l = await connectSse(mcp.sseUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "cline" });
  await l.client.callTool({ name: "echo", arguments: { message: "legacy" } });
  await l.close();

  // scripted
  const up = await startScriptedUpstream();
  up.route("POST", "/mcp", (req, res) => {
    const m = req.json as any;
    if (Array.isArray(m)) return json(res, m.map((x: any) => rpcResult(x.id, { ok: true })));
    if (m === undefined) return json(res, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }, {}, 400);
    if (m.id === undefined) return accepted(res);
    if (m.params?.name === "fail") return json(res, { jsonrpc: "2.0", id: m.id, error: { code: -32602, message: "Unknown tool: fail" } });
    if (m.params?.name === "bad") return json(res, { jsonrpc: "2.0", id: m.id, result: "oops" });
    if (m.params?.name === "hang") { sseHead(res); res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t-1", progress: 1, total: 2 } }, { id: "ev-1", event: "message" })); return void res.end(); }
    if (m.params?.name === "ask") return json(res, rpcResult(m.id, { resultType: "input_required", inputRequests: [] }));
    return json(res, rpcResult(m.id, { content: [{ type: "text", text: "x".repeat(400) }] }));
  });
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${up.url}/mcp`, { method: "POST", dispatcher: agent, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
    await r.arrayBuffer();
  };
  await post([{ jsonrpc: "2.0", id: 1, method: "tools/list" }, { jsonrpc: "2.0", id: 2, method: "prompts/list" }]);
  await post({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "fail", arguments: {} } });
  await post({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "bad", arguments: {} } });
  await post({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "hang", arguments: {}, _meta: { progressToken: "t-1" } } });
  await post({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "big", arguments: { q: "weather" } } });
  await post({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "ask", arguments: {}, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } }, { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "other" });
  await post('{"jsonrpc":"2.0","id":8,"method":"tools/call",');
  await post({ id: 9, method: "ping" });
  await post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99, reason: "user" } });

  // auth
  up.route("GET", "/private", (_req, res) => json(res, { error: "invalid_token" }, { "www-authenticate": `Bearer resource_metadata="${up.url}/.well-known/oauth-protected-resource/private", scope="mcp:tools"` }, 401));
  up.route("GET", "/.well-known/oauth-protected-resource/private", (_req, res) => json(res, { resource: `${up.url}/private`, authorization_servers: [`${up.url}/`], scopes_supported: ["mcp:tools"] }));
  up.route("GET", "/.well-known/oauth-authorization-server", (_req, res) => json(res, { issuer: `${up.url}/`, authorization_endpoint: `${up.url}/authorize`, token_endpoint: `${up.url}/token`, registration_endpoint: `${up.url}/register`, code_challenge_methods_supported: ["S256"], grant_types_supported: ["authorization_code", "refresh_token"] }));
  up.route("POST", "/register", (_req, res) => json(res, { client_id: "c-123", client_secret: "s3cr3t-value-xyz", client_secret_expires_at: 0 }, {}, 201));
  up.route("POST", "/token", (_req, res) => json(res, { access_token: "at-value-123456", token_type: "Bearer", expires_in: 3600, refresh_token: "rt-value-123456", scope: "mcp:tools" }));
  for (const p of ["/private", "/.well-known/oauth-protected-resource/private", "/.well-known/oauth-authorization-server"]) await (await fetch(`${up.url}${p}`, { dispatcher: agent })).arrayBuffer();
  await (await fetch(`${up.url}/register`, { method: "POST", dispatcher: agent, headers: { "content-type": "application/json" }, body: JSON.stringify({ client_name: "Claude Code", redirect_uris: ["http://localhost:33418/callback"], grant_types: ["authorization_code", "refresh_token"], token_endpoint_auth_method: "client_secret_post" }) })).arrayBuffer();
  await (await fetch(`${up.url}/token`, { method: "POST", dispatcher: agent, headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ grant_type: "authorization_code", code: "code-123456", code_verifier: "verifier-1234567890", client_id: "c-123", client_secret: "s3cr3t-value-xyz", redirect_uri: "http://localhost:33418/callback", resource: `${up.url}/private` }).toString() })).arrayBuffer();

  // refused
  await rawProxyExchange(proxy, "CONNECT ../../x:443 HTTP/1.1\r\nHost: x\r\n\r\n");
  {
    const { socket } = await openTunnel(proxy, `127.0.0.1:${up.port}`);
    const t = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    await rawRequest(t, "GET /mcp HTTP/1.1\r\nHost: other.example\r\nConnection: close\r\n\r\n");
  }
  await rawProxyExchange(proxy, "GET http://127.0.0.1:1/x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nX-Bad: a\u0000b\r\n\r\n");
  // passthrough tunnel
  const plain = await startHttpsUpstream();
  {
    const { socket } = await openTunnel(proxy, `localhost:${plain.port}`);
    const t = await tlsThroughTunnel(socket, "localhost", mcp.caPem);
    await rawRequest(t, `GET /bytes?n=10 HTTP/1.1\r\nHost: localhost:${plain.port}\r\nConnection: close\r\n\r\n`);
  }
  // websocket + echoed credentials + failed refresh
  {
    const https = await import("node:https");
    const { testPki } = await import("../test/helpers/test-pki.js");
    const pki = testPki();
    const srv = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem }, (req, res) => {
      req.resume();
      req.on("end", () => {
        if (req.url === "/token") { const b = JSON.stringify({ error: "invalid_grant", error_description: "refresh token rt-8xZq2LmN0pQ expired" }); res.writeHead(400, { "content-type": "application/json", "content-length": String(b.length) }); return res.end(b); }
        res.writeHead(401, { "content-type": "application/json", "content-length": "2", "www-authenticate": `Bearer error="invalid_token", error_description="token eyJhbGciOi-not-a-jwt-8xZq expired"` });
        res.end("{}");
      });
    });
    srv.on("upgrade", (_req, socket) => socket.end("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"));
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
    const port = (srv.address() as any).port;
    await (await fetch(`https://127.0.0.1:${port}/mcp`, { method: "POST", dispatcher: agent, headers: { authorization: "Bearer eyJhbGciOi-not-a-jwt-8xZq", cookie: "sid=8f14e45fceea167a5a36dedd4bea2543; theme=dark", "x-api-key": "sk-live-51HxYzAbCdEf", "content-type": "application/json", "mcp-protocol-version": "2025-06-18" }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' })).arrayBuffer();
    await (await fetch(`https://127.0.0.1:${port}/token`, { method: "POST", dispatcher: agent, headers: { "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=refresh_token&refresh_token=rt-8xZq2LmN0pQ&client_id=c-123" })).arrayBuffer();
    const { socket } = await openTunnel(proxy, `127.0.0.1:${port}`);
    const t = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    const done = readAll(t);
    t.write(`GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    await done;
    await new Promise((r) => setTimeout(r, 200));
    srv.closeAllConnections(); srv.close();
  }
  // client TLS error
  if (hasCurl) await curl(["-sS", "-x", proxy.url, `https://127.0.0.1:${up.port}/mcp`]);
  // upstream TLS failure
  const bad = await startHttpsUpstream({ cert: selfSignedServerCert().certPem, key: selfSignedServerCert().keyPem });
  await (await fetch(`${bad.url}/mcp`, { method: "POST", dispatcher: agent, body: "{}" , headers: { "content-type": "application/json" } })).arrayBuffer();
  const cp = await closedPort();
  await (await fetch(`https://127.0.0.1:${cp}/mcp`, { dispatcher: agent })).arrayBuffer();

  await new Promise((r) => setTimeout(r, 500));
  await agent.close();
  await proxy.stop();
  await copyFile(logFile, "/tmp/capture-a.ndjson");

  // insecure + policy enforce
  const policy = path.join(dir, "policy.yaml");
  await writeFile(policy, `mode: enforce\ndefault: allow\nrules:\n  - name: no-env\n    action: deny\n    reason: reads the environment\n    match:\n      tool: get-env\n  - name: no-evil\n    action: deny\n    reason: not approved\n    match: { server: "evil.example" }\n`);
  const logB = path.join(dir, "b.ndjson");
  const p2 = await startTestProxy({ logFile: logB, insecureUpstream: true, config: policy });
  const c2 = await connectStreamable(mcp.streamableUrl, { proxyUrl: p2.url, caPem: p2.caPem, clientName: "cursor" });
  await c2.client.callTool({ name: "get-env", arguments: {} }).catch(() => undefined);
  await c2.close();
  await rawProxyExchange(p2, "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n");
  await new Promise((r) => setTimeout(r, 300));
  await p2.stop();
  await copyFile(logB, "/tmp/capture-b.ndjson");
  const logC = path.join(dir, "c.ndjson");
  const p3 = await startTestProxy({ logFile: logC, proxyAuth: "wiretap:letmein-123" });
  await rawProxyExchange(p3, `CONNECT 127.0.0.1:${up.port} HTTP/1.1\r\nHost: x\r\nProxy-Authorization: Basic ${Buffer.from("wiretap:wrong").toString("base64")}\r\n\r\n`);
  await new Promise((r) => setTimeout(r, 200));
  await p3.stop();
  await copyFile(logC, "/tmp/capture-c.ndjson");
  await up.close(); await mcp.close(); await plain.close(); await bad.close();
});
