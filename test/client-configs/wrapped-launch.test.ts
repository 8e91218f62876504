/**
 * For real: the built CLI wraps a client config, the SDK's StdioClientTransport launches the wrapped entry
 * the way the client would (its command, args and env), the calls work and are recorded in the per-user
 * folder, and the CLI's unwrap gives back the file byte for byte.
 */
import { readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, NODE_BIN, runCli } from "../helpers/proxy-harness.js";
import { SCRIPTED_STDIO, tempDir } from "../helpers/stdio-shim.js";
import { waitUntil } from "../helpers/wait-until.js";
import { WRAPPED_NODE_FLAGS } from "../../src/startup/node-flags.js";

interface Entry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

describe("a wrapped entry, launched as a client launches it", () => {
  it("works through mcp-wiretap stdio, is recorded, and unwraps to the same bytes", async () => {
    const dir = tempDir("mcp-wiretap-wrap-live-");
    const state = path.join(dir, "state");
    const file = path.join(dir, "claude_desktop_config.json");
    const original = JSON.stringify({ mcpServers: { scripted: { command: NODE_BIN, args: [SCRIPTED_STDIO], env: { SERVER_SETTING: "kept" } } } }, null, 2) + "\n";
    writeFileSync(file, original);
    const env = { XDG_STATE_HOME: state };

    const wrapped = await runCli(["wrap", "--config", file], { env });
    expect(wrapped.code, wrapped.stderr + wrapped.stdout).toBe(0);
    expect(wrapped.stdout).toContain("scripted: wrapped");
    const entry = (JSON.parse(readFileSync(file, "utf8")) as { mcpServers: Record<string, Entry> }).mcpServers.scripted!;
    // The running CLI found itself: its runtime and main script, absolute.
    expect(entry).toEqual({ command: realpathSync(NODE_BIN), args: [...WRAPPED_NODE_FLAGS, realpathSync(CLI_MAIN), "stdio", "--name", "scripted", "--", NODE_BIN, SCRIPTED_STDIO], env: { SERVER_SETTING: "kept" } });

    // Launched with only the entry's env and a PATH that finds nothing, as a desktop app might. The pin store
    // is pointed at the test's folder (otherwise it is the per-user state folder); nothing else is added.
    const args = [...entry.args];
    args.splice(args.indexOf("stdio") + 1, 0, "--ca-dir", path.join(dir, "pins"));
    const transport = new StdioClientTransport({ command: entry.command, args, env: { ...entry.env, ...env, PATH: "/nonexistent" }, stderr: "pipe" });
    const client = new Client({ name: "wrap-test-client", version: "1.0.0" });
    await client.connect(transport, { timeout: 20_000 });
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain("echo");
    expect(await client.callTool({ name: "echo", arguments: { message: "through the wrapper" } })).toEqual({ content: [{ type: "text", text: "Echo: through the wrapper" }] });
    await client.close();

    const logs = path.join(state, "mcp-wiretap");
    let all: Array<Record<string, unknown>> = [];
    await waitUntil(
      () => {
        const files = readdirSync(logs).filter((f) => f.endsWith(".ndjson"));
        if (files.length !== 1) return false;
        const lines = readFileSync(path.join(logs, files[0]!), "utf8").split("\n").filter(Boolean);
        all = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
        return all.some((r) => r.event === "stop");
      },
      { timeoutMs: 15_000, what: "the wrapped server's log" },
    );
    const rpc = all.filter((r) => r.event === "rpc");
    const call = rpc.find((r) => r.method === "tools/call" && r.kind === "request");
    expect(call).toMatchObject({ transport: "stdio", server: "stdio:scripted", direction: "client_to_server", tool: "echo" });
    expect(rpc.find((r) => r.kind === "response" && r.id === call!.id)).toMatchObject({ direction: "server_to_client", method: "tools/call", tool: "echo" });

    const unwrapped = await runCli(["unwrap", "--config", file], { env });
    expect(unwrapped.code, unwrapped.stderr + unwrapped.stdout).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(original);
  });
});
