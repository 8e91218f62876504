/**
 * The official MCP reference server ("server-everything") behind real TLS
 * (test PKI) on loopback, over both HTTP transports at once:
 *
 *   /mcp             Streamable HTTP (sessionful, resumable; POST, GET, DELETE)
 *   /sse + /message  legacy HTTP+SSE
 *
 * Mirrors the reference server's own `dist/transports/streamableHttp.js` and
 * `dist/transports/sse.js`, as plain node handlers (no express types needed),
 * and counts what it receives so a test can assert what reached the upstream.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createServer as createEverythingServer } from "@modelcontextprotocol/server-everything/dist/server/index.js";
import { InMemoryEventStore } from "./mcp-event-store.js";
import { testPki } from "./test-pki.js";

export interface McpUpstreamCounters {
  /** HTTP requests by method, over all paths. */
  posts: number;
  gets: number;
  deletes: number;
  /** JSON-RPC `tools/call` requests received in POST bodies. */
  toolCalls: number;
  /** JSON-RPC messages received in POST bodies (requests and notifications), by method. */
  byMethod: Map<string, number>;
  /** `tools/call` requests by tool name. */
  toolCallsByName: Map<string, number>;
}

export interface McpUpstream {
  /** `https://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** `${url}/mcp` (Streamable HTTP) */
  streamableUrl: string;
  /** `${url}/sse` (legacy HTTP+SSE; messages go to `/message?sessionId=…`) */
  sseUrl: string;
  /** The test CA that signed this upstream's certificate. */
  caPem: string;
  counters: McpUpstreamCounters;
  /** MCP sessions (both transports) currently alive. */
  readonly openSessions: number;
  close(): Promise<void>;
}

export interface McpUpstreamOptions {
  /** Only "both" exists: Streamable HTTP and HTTP+SSE are always served. */
  transport?: "both";
  /** Called with each session's server before it connects (e.g. to change a tool's definition). */
  customize?: (server: McpServer) => void;
  /** The address to listen on (default 127.0.0.1): a container bridge's gateway for tests of images. */
  host?: string;
}

interface Session {
  server: McpServer;
  transport: StreamableHTTPServerTransport | SSEServerTransport;
  cleanup: (sessionId?: string) => void;
}

const PARSE_FAILED = Symbol("parse failed");

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: "2.0", error: { code, message }, id: null });
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return PARSE_FAILED;
  }
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function countMessages(counters: McpUpstreamCounters, body: unknown): void {
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== "object" || message === null) continue;
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
    if (typeof method !== "string") continue;
    bump(counters.byMethod, method);
    if (method === "tools/call") {
      counters.toolCalls++;
      if (typeof params?.name === "string") bump(counters.toolCallsByName, params.name);
    }
  }
}

/** Starts the reference server on https://127.0.0.1:0 (or `opts.host`) with the test PKI. */
export async function startMcpUpstream(opts: McpUpstreamOptions = {}): Promise<McpUpstream> {
  const pki = testPki();
  const counters: McpUpstreamCounters = {
    posts: 0,
    gets: 0,
    deletes: 0,
    toolCalls: 0,
    byMethod: new Map(),
    toolCallsByName: new Map(),
  };
  const sessions = new Set<Session>();
  const streamableById = new Map<string, Session>();
  const sseById = new Map<string, Session>();

  function track(session: Session, byId: Map<string, Session>): void {
    sessions.add(session);
    session.server.server.onclose = () => {
      const sessionId = session.transport.sessionId;
      if (sessionId) byId.delete(sessionId);
      sessions.delete(session);
      session.cleanup(sessionId);
    };
  }

  async function postStreamable(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const existing = streamableById.get(sessionId);
      if (!existing) return jsonRpcError(res, 400, -32000, "Bad Request: No valid session ID provided");
      return (existing.transport as StreamableHTTPServerTransport).handleRequest(req, res, body);
    }
    const { server, cleanup } = createEverythingServer();
    opts.customize?.(server);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new InMemoryEventStore(),
      onsessioninitialized: (id) => {
        streamableById.set(id, session);
      },
    });
    const session: Session = { server, transport, cleanup };
    track(session, streamableById);
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    // Not an initialize request: the transport refused it; drop the unused server.
    if (!transport.sessionId) await server.close();
  }

  async function existingStreamable(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers["mcp-session-id"];
    const session = typeof sessionId === "string" ? streamableById.get(sessionId) : undefined;
    if (!session) return jsonRpcError(res, 400, -32000, "Bad Request: No valid session ID provided");
    await (session.transport as StreamableHTTPServerTransport).handleRequest(req, res);
  }

  async function openSse(res: ServerResponse): Promise<void> {
    const { server, cleanup } = createEverythingServer();
    opts.customize?.(server);
    const transport = new SSEServerTransport("/message", res);
    const session: Session = { server, transport, cleanup };
    sseById.set(transport.sessionId, session);
    track(session, sseById);
    await server.connect(transport);
  }

  async function postSse(req: IncomingMessage, res: ServerResponse, url: URL, body: unknown): Promise<void> {
    const sessionId = url.searchParams.get("sessionId") ?? "";
    const session = sseById.get(sessionId);
    if (!session) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`No transport found for sessionId ${sessionId}`);
      return;
    }
    await (session.transport as SSEServerTransport).handlePostMessage(req, res, body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "https://upstream.invalid");
    if (req.method === "POST") counters.posts++;
    else if (req.method === "GET") counters.gets++;
    else if (req.method === "DELETE") counters.deletes++;
    const route = `${req.method} ${url.pathname}`;
    let body: unknown;
    if (route === "POST /mcp" || route === "POST /message") {
      body = await readJsonBody(req);
      if (body === PARSE_FAILED) return jsonRpcError(res, 400, -32700, "Parse error: Invalid JSON");
      countMessages(counters, body);
    }
    switch (route) {
      case "POST /mcp":
        return postStreamable(req, res, body);
      case "GET /mcp":
      case "DELETE /mcp":
        return existingStreamable(req, res);
      case "GET /sse":
        return openSse(res);
      case "POST /message":
        return postSse(req, res, url, body);
      default:
        res.writeHead(404, { "content-type": "text/plain" }).end(`not found: ${route}`);
    }
  }

  const httpsServer = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal server error");
      else res.destroy();
    });
  });
  httpsServer.on("tlsClientError", () => undefined);
  await new Promise<void>((resolve, reject) => {
    httpsServer.once("error", reject);
    httpsServer.listen(0, opts.host ?? "127.0.0.1", () => {
      httpsServer.off("error", reject);
      resolve();
    });
  });
  const { port } = httpsServer.address() as AddressInfo;
  const url = `https://127.0.0.1:${port}`;
  let closing: Promise<void> | undefined;

  async function closeAll(): Promise<void> {
    for (const session of [...sessions]) {
      const sessionId = session.transport.sessionId;
      await session.server.close().catch(() => undefined);
      session.cleanup(sessionId);
    }
    sessions.clear();
    streamableById.clear();
    sseById.clear();
    await new Promise<void>((resolve) => {
      httpsServer.close(() => resolve());
      httpsServer.closeAllConnections();
    });
  }

  return {
    url,
    port,
    streamableUrl: `${url}/mcp`,
    sseUrl: `${url}/sse`,
    caPem: pki.caPem,
    counters,
    get openSessions() {
      return sessions.size;
    },
    close() {
      closing ??= closeAll();
      return closing;
    },
  };
}
