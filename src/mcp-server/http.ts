import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { UiGuard } from "../ui/server/guard.js";

/** A request body larger than this is refused before it is read whole (the SDK reads bodies without a limit). */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface RunningMcpHttp {
  port: number;
  /** `http://127.0.0.1:PORT/mcp` */
  url: string;
  token: string;
  close(): Promise<void>;
}

/**
 * Streamable HTTP on 127.0.0.1 only, stateless (a fresh server per request: every tool reads the shared
 * logs, nothing lives in a session). Every request needs `Authorization: Bearer <token>`, a `Host` naming
 * this server and no foreign `Origin` — the web UI's checks (src/ui/server/guard.ts): the traffic is decrypted.
 */
export async function serveMcpHttp(makeServer: () => McpServer, port: number): Promise<RunningMcpHttp> {
  let guard: UiGuard | null = null;
  const http = createServer((req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("X-Content-Type-Options", "nosniff");
    if (!guard) return end(res, 503, "starting");
    const foreign = guard.foreignRequest(req);
    if (foreign !== null) return end(res, 403, foreign);
    if (!guard.bearerMatches(req)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="mcp-wiretap"');
      return end(res, 401, "the bearer token printed at start is required (Authorization: Bearer <token>)");
    }
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/mcp") return end(res, 404, "not found: the MCP endpoint is /mcp");
    if (req.method !== "POST") {
      res.setHeader("Allow", "POST");
      return end(res, 405, "stateless server: POST only");
    }
    void handle(req, res, makeServer).catch(() => {
      if (!res.headersSent) end(res, 500, "internal error");
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, "127.0.0.1", () => resolve());
  });
  const bound = (http.address() as AddressInfo).port;
  guard = new UiGuard(bound);
  return {
    port: bound,
    url: `http://127.0.0.1:${bound}/mcp`,
    token: guard.token,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, makeServer: () => McpServer): Promise<void> {
  const body = await readBody(req);
  if (body === null) return end(res, 413, `request body over ${MAX_BODY_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return end(res, 400, "the body is not JSON");
  }
  const server = makeServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, parsed);
}

/** The body as text, or null past MAX_BODY_BYTES (then the rest is not read). */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > MAX_BODY_BYTES) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function end(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", Connection: "close" });
  res.end(`${text}\n`);
}
