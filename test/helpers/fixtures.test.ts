/**
 * Self-tests of the end-to-end fixtures, without any proxy: the upstreams are
 * reached directly, trusting the test CA.
 */
import { X509Certificate, randomBytes } from "node:crypto";
import http from "node:http";
import net from "node:net";
import { networkInterfaces } from "node:os";
import { Agent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  GZIP_JSON_BODY,
  type TestUpstream,
  patternBytes,
  startHttpUpstream,
  startHttpsUpstream,
} from "./https-upstream.js";
import { connectSse, connectStreamable } from "./mcp-client.js";
import { type McpUpstream, startMcpUpstream } from "./mcp-upstream.js";
import { expiredServerCert, selfSignedServerCert, testPki, wrongNameServerCert } from "./test-pki.js";
import { waitUntil } from "./wait-until.js";
import { skipNote } from "./skip-note.js";

/** A blind CONNECT tunnel (no interception), to check the clients' proxy path. */
async function startBlindTunnel(): Promise<{ url: string; targets: string[]; close(): Promise<void> }> {
  const targets: string[] = [];
  const sockets = new Set<net.Socket>();
  const proxy = http.createServer((_req, res) => res.writeHead(405).end());
  proxy.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = new URL(`http://${req.url}`);
    targets.push(req.url ?? "");
    const upstream = net.connect(Number(target.port), target.hostname, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => undefined).on("close", () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`,
    targets,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        proxy.close(() => resolve());
      }),
  };
}

const hasIpv6Loopback = Object.values(networkInterfaces()).some((list) =>
  list?.some((entry) => entry.internal && entry.family === "IPv6" && entry.address === "::1"),
);

skipNote(import.meta.url, !hasIpv6Loopback, "no IPv6 loopback (::1) on this machine");
describe("test PKI", () => {
  it("issues a server cert for the loopback names, signed by the test CA", () => {
    const pki = testPki();
    const ca = new X509Certificate(pki.caPem);
    const server = new X509Certificate(pki.serverCertPem);
    expect(ca.ca).toBe(true);
    expect(server.checkIssued(ca) && server.verify(ca.publicKey)).toBe(true);
    for (const name of ["DNS:localhost", "DNS:upstream.test", "IP Address:127.0.0.1", "IP Address:0:0:0:0:0:0:0:1"]) {
      expect(server.subjectAltName).toContain(name);
    }
    expect(testPki().serverCertPem).toBe(pki.serverCertPem); // cached per process
  });
});

describe("https upstream", () => {
  let upstream: TestUpstream;
  let agent: Agent;
  beforeAll(async () => {
    upstream = await startHttpsUpstream();
    agent = new Agent({ connect: { ca: testPki().caPem } });
  });
  afterAll(async () => {
    await agent.close();
    await upstream.close();
  });

  it("echoes the body byte-for-byte and reports the Host it saw, over one kept-alive connection", async () => {
    const body = randomBytes(100_000);
    const res = await fetch(`${upstream.url}/echo`, { method: "POST", body, dispatcher: agent });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-upstream-saw-host")).toBe(`127.0.0.1:${upstream.port}`);
    expect(res.headers.get("content-length")).toBe(String(body.length));
    expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);
    expect(upstream.connections).toBe(1);
    // With one connection allowed, undici must reuse the kept-alive socket.
    const single = new Agent({ connections: 1, connect: { ca: testPki().caPem } });
    try {
      for (const text of ["a", "b", "c"]) {
        const again = await fetch(`${upstream.url}/echo`, { method: "POST", body: text, dispatcher: single });
        expect(await again.text()).toBe(text);
      }
    } finally {
      await single.close();
    }
    expect(upstream.connections).toBe(2);
    expect(upstream.requests[0]?.body.equals(body)).toBe(true);
    expect(upstream.sniServerNames).toEqual([false, false]); // no SNI for an IP address
  });

  it("serves pattern bytes with and without content-length", async () => {
    const n = 300_001;
    const sized = await fetch(`${upstream.url}/bytes?n=${n}&seed=7`, { dispatcher: agent });
    expect(sized.headers.get("content-length")).toBe(String(n));
    expect(Buffer.from(await sized.arrayBuffer()).equals(patternBytes(n, 7))).toBe(true);
    const chunked = await fetch(`${upstream.url}/chunked?n=${n}&seed=7`, { dispatcher: agent });
    expect(chunked.headers.get("content-length")).toBeNull();
    expect(chunked.headers.get("transfer-encoding")).toBe("chunked");
    expect(Buffer.from(await chunked.arrayBuffer()).equals(patternBytes(n, 7))).toBe(true);
  });

  it("serves gzip, JSON-RPC, slow and 404 routes", async () => {
    const gz = await fetch(`${upstream.url}/gzip`, { dispatcher: agent });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(await gz.json()).toEqual(GZIP_JSON_BODY);

    const post = (body: string) =>
      fetch(`${upstream.url}/mcp-json`, { method: "POST", body, dispatcher: agent });
    const single = await post('{"jsonrpc":"2.0","id":7,"method":"tools/list"}');
    expect(await single.json()).toEqual({ jsonrpc: "2.0", id: 7, result: { ok: true } });
    const batch = await post('[{"jsonrpc":"2.0","id":"a","method":"x"},{"jsonrpc":"2.0","method":"n"}]');
    expect(await batch.json()).toEqual([{ jsonrpc: "2.0", id: "a", result: { ok: true } }]);
    const notification = await post('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    expect(notification.status).toBe(202);
    await notification.arrayBuffer();

    const started = Date.now();
    const slow = await fetch(`${upstream.url}/slow?ms=60`, { method: "POST", dispatcher: agent });
    expect(slow.status).toBe(200);
    await slow.text();
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);

    const missing = await fetch(`${upstream.url}/nope`, { dispatcher: agent });
    expect(missing.status).toBe(404);
    await missing.text();
  });

  it("delivers SSE events spaced in time, and notices a client going away", async () => {
    const res = await fetch(`${upstream.url}/sse?count=3&interval=80`, { dispatcher: agent });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const arrivals: number[] = [];
    let text = "";
    for await (const chunk of res.body ?? []) {
      text += Buffer.from(chunk).toString();
      arrivals.push(Date.now());
    }
    const events = text.split("\n\n").filter(Boolean);
    expect(events).toHaveLength(3);
    expect(events[0]).toMatch(/^id: 1\nevent: message\ndata: \{"i":1,"t":\d+\}$/);
    const writtenAt = events.map((e) => Number(/"t":(\d+)/.exec(e)?.[1]));
    expect((writtenAt[2] ?? 0) - (writtenAt[0] ?? 0)).toBeGreaterThanOrEqual(155);
    // Delivered as written, not in one lump (loose bound: the machine may be busy).
    expect((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(60);

    const controller = new AbortController();
    const forever = await fetch(`${upstream.url}/sse-forever?interval=20`, {
      dispatcher: agent,
      signal: controller.signal,
    });
    const reader = forever.body!.getReader();
    await reader.read();
    await waitUntil(() => upstream.openSseStreams === 1, { what: "only the endless stream to be open" });
    controller.abort();
    await reader.cancel().catch(() => undefined);
    await waitUntil(() => upstream.openSseStreams === 0, { what: "the upstream to see the SSE client leave" });
  });

  it.each([
    ["expired", expiredServerCert, "CERT_HAS_EXPIRED"],
    ["wrong name", wrongNameServerCert, "ERR_TLS_CERT_ALTNAME_INVALID"],
    ["self-signed", selfSignedServerCert, "DEPTH_ZERO_SELF_SIGNED_CERT"],
  ])("rejects the %s server cert", async (_label, variant, code) => {
    const { certPem, keyPem } = variant();
    const bad = await startHttpsUpstream({ cert: certPem, key: keyPem });
    const direct = new Agent({ connect: { ca: testPki().caPem } });
    try {
      const error = await fetch(`${bad.url}/gzip`, { dispatcher: direct }).catch((e: unknown) => e);
      expect((error as { cause?: { code?: string } }).cause?.code).toBe(code);
    } finally {
      await direct.close();
      await bad.close();
    }
  });

  it.runIf(hasIpv6Loopback)("listens on ::1 too", async () => {
    const v6 = await startHttpsUpstream({ host: "::1" });
    try {
      expect(v6.url).toBe(`https://[::1]:${v6.port}`);
      const res = await fetch(`${v6.url}/echo`, { method: "POST", body: "six", dispatcher: agent });
      expect(await res.text()).toBe("six");
    } finally {
      await v6.close();
    }
  });

  it("has a plain-HTTP twin with the same routes", async () => {
    const plain = await startHttpUpstream();
    try {
      expect(plain.url).toBe(`http://127.0.0.1:${plain.port}`);
      const res = await fetch(`${plain.url}/echo`, { method: "POST", body: "plain", dispatcher: agent });
      expect(res.headers.get("x-upstream-saw-host")).toBe(`127.0.0.1:${plain.port}`);
      expect(await res.text()).toBe("plain");
    } finally {
      await plain.close();
    }
  });
});

describe("MCP reference upstream, direct SDK client", () => {
  let upstream: McpUpstream;
  beforeAll(async () => {
    upstream = await startMcpUpstream();
  });
  afterAll(async () => {
    await upstream.close();
  });

  it.each([
    ["Streamable HTTP", () => connectStreamable(upstream.streamableUrl, { caPem: upstream.caPem })],
    ["HTTP+SSE", () => connectSse(upstream.sseUrl, { caPem: upstream.caPem })],
  ])("speaks MCP over %s", async (label, connect) => {
    const toolCallsBefore = upstream.counters.toolCalls;
    const { client, close } = await connect();
    try {
      expect(client.getServerVersion()?.name).toBe("mcp-servers/everything");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "get-sum"]));

      const echo = await client.callTool({ name: "echo", arguments: { message: `hi over ${label}` } });
      expect(echo.content).toEqual([{ type: "text", text: `Echo: hi over ${label}` }]);
      const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
      expect(JSON.stringify(sum.content)).toContain("5");

      const progress: number[] = [];
      const long = await client.callTool(
        { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
        undefined,
        { onprogress: (p) => progress.push(p.progress) },
      );
      // The SDK client dispatches notifications a microtask late but responses at once, so the
      // last progress notification is dropped when it arrives in the same read as the result.
      expect(progress.slice(0, 2)).toEqual([1, 2]);
      expect(JSON.stringify(long.content)).toContain("Long running operation completed");

      expect((await client.listResources()).resources.length).toBeGreaterThan(0);
      expect((await client.listPrompts()).prompts.length).toBeGreaterThan(0);
      expect(await client.ping()).toEqual({});
    } finally {
      await close();
    }
    expect(upstream.counters.toolCalls - toolCallsBefore).toBe(3);
    await waitUntil(() => upstream.openSessions === 0, { what: "the upstream session to end" });
  });

  it("connects both transports through an HTTP proxy (CONNECT)", async () => {
    const tunnel = await startBlindTunnel();
    try {
      const opts = { proxyUrl: tunnel.url, caPem: upstream.caPem }; // a blind tunnel: upstream cert
      for (const connected of [
        await connectStreamable(upstream.streamableUrl, opts),
        await connectSse(upstream.sseUrl, opts),
      ]) {
        const echo = await connected.client.callTool({ name: "echo", arguments: { message: "tunnelled" } });
        expect(echo.content).toEqual([{ type: "text", text: "Echo: tunnelled" }]);
        await connected.close();
      }
      expect(new Set(tunnel.targets)).toEqual(new Set([`127.0.0.1:${upstream.port}`]));
    } finally {
      await tunnel.close();
    }
  });

  it("counted what it received", () => {
    const { counters } = upstream;
    expect(counters.byMethod.get("initialize")).toBe(4);
    expect(counters.byMethod.get("notifications/initialized")).toBe(4);
    expect(counters.toolCallsByName.get("echo")).toBe(4);
    expect(counters.byMethod.get("ping")).toBe(2);
    expect(counters.deletes).toBe(2); // Streamable HTTP sessions terminated on close()
    expect(counters.gets).toBeGreaterThanOrEqual(1); // at least the SSE stream
    expect(counters.posts).toBeGreaterThan(10);
  });
});
