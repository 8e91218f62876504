// The Compose test's HTTPS MCP server, run in a container of the image under test on the Compose network
// (its node and its @modelcontextprotocol/sdk, mounted as /app/test-upstream.mjs): a container reaches
// another on its network wherever the engine runs, where a host's own address may be firewalled off.
// Streamable HTTP, stateless (a server and transport per request), one tool: echo.
import { readFileSync } from "node:fs";
import https from "node:https";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const port = Number(process.env.PORT ?? 8443);

function mcpServer() {
  const server = new McpServer({ name: "deploy-test-upstream", version: "1.0.0" });
  server.registerTool("echo", { description: "Echoes back the input", inputSchema: { message: z.string() } }, async ({ message }) => ({
    content: [{ type: "text", text: `Echo: ${message}` }],
  }));
  return server;
}

const httpsServer = https.createServer(
  { cert: readFileSync("/etc/upstream/cert.pem"), key: readFileSync("/etc/upstream/key.pem") },
  async (req, res) => {
    if (new URL(req.url ?? "/", "https://x").pathname !== "/mcp") return void res.writeHead(404).end();
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res);
  },
);
httpsServer.listen(port, "0.0.0.0", () => console.log(`upstream listening on ${port}`));
process.on("SIGTERM", () => httpsServer.close(() => process.exit(0)));
