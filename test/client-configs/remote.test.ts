/**
 * `wrap --remote`: a server listed by URL becomes `mcp-wiretap bridge URL` with its headers in the entry's
 * env (legacy SSE ones through `bridge --transport sse`); unwrap gives back the bytes. And for real: the bridged entry,
 * launched as a client launches it, reaches server-everything over TLS.
 */
import { copyFileSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import type { ClientId } from "../../src/client-configs/clients.js";
import { runWrap } from "../../src/client-configs/run-wrap.js";
import { startMcpUpstream } from "../helpers/mcp-upstream.js";
import { REPO_ROOT, runCli } from "../helpers/proxy-harness.js";
import { tempDir } from "../helpers/stdio-shim.js";
import { writeTempFile } from "../helpers/test-pki.js";

const FIXTURES = path.join(REPO_ROOT, "test", "fixtures", "client-configs");
const LAUNCHER = { command: "/opt/node", prefix: ["/opt/w/dist/cli/main.js"] };

async function run(action: "wrap" | "unwrap", file: string, client: ClientId, state: string): Promise<string> {
  const lines: string[] = [];
  await runWrap(
    { action, servers: [], client, config: file, dryRun: false, remote: true, launcher: LAUNCHER, stateDir: state, platform: { platform: "linux", env: {}, home: "/nowhere", cwd: "/" } },
    (l) => lines.push(l),
  );
  return lines.join("\n");
}

describe("wrap --remote", () => {
  for (const [fixture, client, bridged, sse] of [
    [".mcp.json", "claude-code", "sentry", "legacy"],
    ["cursor-mcp.json", "cursor", "remote", undefined],
    ["vscode-mcp.json", "vscode", "github", undefined],
    ["windsurf-mcp_config.json", "windsurf", "figma", undefined],
    ["gemini-settings.json", "gemini", "httpServer", "sseServer"],
  ] as const) {
    it(`${client}: the URL entry runs the bridge; unwrap restores the bytes`, async () => {
      const dir = tempDir("mcp-wiretap-wrap-remote-");
      const file = path.join(dir, fixture);
      copyFileSync(path.join(FIXTURES, fixture), file);
      const original = readFileSync(file, "utf8");
      const out = await run("wrap", file, client, path.join(dir, "state"));
      expect(out).toContain(`${bridged}: bridged`);
      if (sse) expect(out).toContain(`${sse}: bridged`);
      const text = readFileSync(file, "utf8");
      expect(text).toContain('"bridge"');
      if (sse) expect(text).toMatch(/"--transport",\s*"sse"/);
      expect(text).toContain(`"${LAUNCHER.prefix[0]}"`);
      await run("unwrap", file, client, path.join(dir, "state"));
      expect(readFileSync(file, "utf8")).toBe(original);
    });
  }

  it("the header goes to the entry's env, not the command line", async () => {
    const dir = tempDir("mcp-wiretap-wrap-remote-");
    const file = path.join(dir, ".mcp.json");
    copyFileSync(path.join(FIXTURES, ".mcp.json"), file);
    await run("wrap", file, "claude-code", path.join(dir, "state"));
    const sentry = (JSON.parse(readFileSync(file, "utf8")) as { mcpServers: Record<string, unknown> }).mcpServers.sentry;
    expect(sentry).toEqual({
      type: "stdio",
      command: "/opt/node",
      args: ["/opt/w/dist/cli/main.js", "bridge", "https://mcp.sentry.dev/mcp", "--header-env", "Authorization=MCP_WIRETAP_HEADER_1"],
      env: { MCP_WIRETAP_HEADER_1: "Bearer ${SENTRY_TOKEN}" },
    });
  });

  it("for real: the bridged entry reaches server-everything over TLS and is recorded", async () => {
    const upstream = await startMcpUpstream();
    try {
      const dir = tempDir("mcp-wiretap-wrap-remote-live-");
      const file = path.join(dir, "mcp.json");
      const secret = ["k3y", "for", "bridge"].join("-");
      writeFileSync(file, JSON.stringify({ mcpServers: { everything: { url: upstream.streamableUrl, headers: { "X-Api-Key": secret } } } }, null, 2));
      const env = { XDG_STATE_HOME: path.join(dir, "state") };
      const wrapped = await runCli(["wrap", "--remote", "--client", "cursor", "--config", file], { env });
      expect(wrapped.stdout).toContain("everything: bridged");
      const entry = (JSON.parse(readFileSync(file, "utf8")) as { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> }).mcpServers.everything!;
      expect(JSON.stringify(entry.args)).not.toContain(secret);
      // As the client launches it; the test upstream's CA and a CA folder of the test's own are added.
      const args = [...entry.args, "--upstream-ca", writeTempFile(upstream.caPem, "upstream-ca.pem"), "--ca-dir", path.join(dir, "ca")];
      const transport = new StdioClientTransport({ command: entry.command, args, env: { ...entry.env, ...env, PATH: "/nonexistent" }, stderr: "pipe" });
      const client = new Client({ name: "wrap-remote-test", version: "1.0.0" });
      await client.connect(transport, { timeout: 30_000 });
      expect(await client.callTool({ name: "echo", arguments: { message: "bridged" } })).toMatchObject({ content: [{ type: "text", text: "Echo: bridged" }] });
      await client.close();
      const logs = path.join(dir, "state", "mcp-wiretap");
      const log = readdirSync(logs).find((f) => f.endsWith(".ndjson"))!;
      const text = readFileSync(path.join(logs, log), "utf8");
      expect(text).toContain('"tool":"echo"');
      expect(text).not.toContain(secret);
    } finally {
      await upstream.close();
    }
  });
});
