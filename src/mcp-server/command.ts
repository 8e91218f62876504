import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { serveMcpHttp } from "./http.js";
import type { ReplaySettings } from "./replay-tool.js";
import { createWiretapServer } from "./server.js";
import { serveLogs } from "./served-logs.js";

export interface McpCommandOptions {
  /** Streamable HTTP on this loopback port (0: any free one); absent: stdio. */
  port?: number;
  allowReplay?: boolean;
  caDir: string;
  config?: string;
  upstreamCa: string[];
  timeout: number;
}

/**
 * `mcp-wiretap mcp [LOG|DIR…]`: an MCP server over recorded traffic, on stdio (stdout is the MCP channel:
 * everything else goes to stderr) or on Streamable HTTP. Runs until stdin closes (stdio), SIGINT/SIGTERM,
 * or `signal`.
 */
export async function mcpCommand(paths: string[], o: McpCommandOptions, { signal, env = process.env, onReady }: { signal?: AbortSignal; env?: NodeJS.ProcessEnv; onReady?: (info: { url: string; token: string }) => void } = {}): Promise<void> {
  const note = (message: string): void => void process.stderr.write(`mcp-wiretap: ${message}\n`);
  const logs = await serveLogs(paths, { env, onNote: note });
  const replay: ReplaySettings | null = o.allowReplay ? { caDir: o.caDir, upstreamCa: o.upstreamCa, timeoutMs: o.timeout, ...(o.config ? { config: o.config } : {}) } : null;
  const stop = new AbortController();
  signal?.addEventListener("abort", () => stop.abort(), { once: true });
  const onSignal = (): void => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const served = `${logs.files().length} file(s), followed`;
  try {
    if (o.port === undefined) {
      const server = createWiretapServer(logs, replay);
      const transport = new StdioServerTransport();
      transport.onclose = () => stop.abort();
      process.stdin.once("end", () => stop.abort());
      await server.connect(transport);
      note(`MCP server on stdio: ${served}`);
      await aborted(stop.signal);
      await server.close();
    } else {
      const http = await serveMcpHttp(() => createWiretapServer(logs, replay), o.port);
      // The token is said once, here: it is the only key to decrypted traffic.
      note(`MCP server (Streamable HTTP): ${served}\n  URL:   ${http.url}\n  Token: ${http.token}\n  (send it as the header  Authorization: Bearer <token>)`);
      onReady?.({ url: http.url, token: http.token });
      await aborted(stop.signal);
      await http.close();
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await logs.close();
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted ? Promise.resolve() : new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
