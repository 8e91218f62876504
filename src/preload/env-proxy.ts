/**
 * `node --import <file URL of this module>` (which `mcp-wiretap run` and `mcp-wiretap env` put in
 * NODE_OPTIONS): makes `fetch` and `http`/`https` follow HTTPS_PROXY / HTTP_PROXY / NO_PROXY on Node
 * versions whose NODE_USE_ENV_PROXY=1 does not (Node 20, Node 22 before 22.21, Node 24 before 24.5 for
 * `http`). On newer Node, and whenever NODE_USE_ENV_PROXY is not 1, it does nothing.
 *
 * It must never break the program it is loaded into: a failure is one line on stderr.
 * MCP_WIRETAP_PRELOAD_DEBUG=1 prints what it did.
 */
import { installEnvProxy } from "./install.js";

try {
  const result = installEnvProxy();
  if (process.env.MCP_WIRETAP_PRELOAD_DEBUG === "1") {
    process.stderr.write(`mcp-wiretap preload (node ${process.versions.node}): fetch ${result.fetch}, http ${result.http}\n`);
  }
} catch (err) {
  process.stderr.write(`mcp-wiretap preload: proxy settings not applied: ${err instanceof Error ? err.message : String(err)}\n`);
}
