/**
 * A clean session of the official SDK client, run the way a user runs it (`mcp-wiretap run --proxy` on a
 * running `mcp-wiretap start`, the client's global fetch following HTTPS_PROXY), leaves a log with no
 * warning: undici opens spare connections it closes unused, which is no trust failure. A Node client that
 * really rejects the proxy's CA still gets the `client_tls_error` hint. Needs `npm run build`.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCliProxy, type CliProxy } from "../helpers/cli-proxy.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { NODE_BIN, REPO_ROOT, runCli } from "../helpers/proxy-harness.js";
import { execFile } from "node:child_process";

const CLIENT = path.join(REPO_ROOT, "test", "fixtures", "clients", "sdk-env-client.mjs");

describe("warnings after clean SDK sessions", () => {
  let upstream: McpUpstream;
  let proxy: CliProxy;

  beforeAll(async () => {
    upstream = await startMcpUpstream();
    proxy = await startCliProxy();
  });
  afterAll(async () => {
    await proxy?.dispose();
    await upstream?.close();
  });

  const at = (host: string, url: string): string => url.replace("127.0.0.1", host);

  it("Streamable HTTP and legacy SSE sessions leave no warning; a client rejecting the CA gets the hint", async () => {
    for (const [kind, url] of [["streamable", upstream.streamableUrl], ["sse", upstream.sseUrl]] as const) {
      const run = await runCli(["run", "--proxy", proxy.url, "--ca-dir", proxy.caDir, "--", NODE_BIN, CLIENT, kind, at("localhost", url)], { timeoutMs: 20_000 });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/\d+ tools; .*Echo: hello/);
    }
    // The same client without the CA: Node checks the certificate after the handshake and just closes.
    const rejected = await new Promise<string>((resolve) =>
      execFile(NODE_BIN, [CLIENT, "streamable", at("127.0.0.1", upstream.streamableUrl)], {
        env: { ...process.env, HTTPS_PROXY: proxy.url, NODE_USE_ENV_PROXY: "1", NODE_EXTRA_CA_CERTS: "", NO_PROXY: "", NODE_OPTIONS: "" },
        timeout: 15_000,
      }, (err, _stdout, stderr) => resolve(err ? stderr : "trusted")),
    );
    expect(rejected).toMatch(/certificate|fetch failed/i);
    const hint = await proxy.waitForRecord((r) => r.event === "client_tls_error" && String(r.server).startsWith("127.0.0.1:"), "the rejecting client's client_tls_error");
    expect(String(hint.hint)).toMatch(/may not trust the mcp-wiretap CA/);
    const records = await proxy.records();
    expect(records.filter((r) => r.event === "rpc" && r.method === "tools/call" && r.kind === "response")).toHaveLength(2);
    expect(records.filter((r) => r.level === "warn" || r.level === "error"), "warnings of the clean sessions").toEqual([hint]);
  });
});
