// The reference server package ships JavaScript only; this declares the one
// deep import the test fixtures use.
declare module "@modelcontextprotocol/server-everything/dist/server/index.js" {
  import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

  export interface ServerFactoryResponse {
    server: McpServer;
    /** Stops the session's simulated logging/updates and task-store timers. */
    cleanup: (sessionId?: string) => void;
  }

  export function createServer(): ServerFactoryResponse;
}
