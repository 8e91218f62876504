/** The demo's server over Streamable HTTP on loopback, with a certificate from the demo's own CA. */
import { randomUUID } from "node:crypto";
import https from "node:https";
import { answer, type JsonRpc } from "./demo-tools.js";

const MAX_BODY = 64 * 1024;

export async function startDemoHttps(tls: { key: string; cert: string }): Promise<{ url: string; close(): Promise<void> }> {
  const server = https.createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/mcp") return void res.writeHead(404).end();
      let message: JsonRpc;
      try {
        message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as JsonRpc;
      } catch {
        return void res.writeHead(400).end();
      }
      const { progress, reply } = answer(message);
      if (!reply) return void res.writeHead(202).end();
      const session = message.method === "initialize" ? { "mcp-session-id": randomUUID() } : {};
      if (progress.length === 0) return void res.writeHead(200, { "content-type": "application/json", ...session }).end(JSON.stringify(reply));
      // Progress first, then the answer, as one SSE stream.
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...session });
      res.end([...progress, reply].map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join(""));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `https://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
