/** Copy JSON and Copy as curl: the message rebuilt from its record exactly, or not offered. */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { curlOf, messageOf } from "../../../src/ui/web/copy.js";

const request = { event: "rpc", kind: "request", direction: "client_to_server", transport: "streamable-http", server: "mcp.example.com:443", path: "/mcp", session: "s-1", protocolVersion: "2025-11-25", id: 7, method: "tools/call", tool: "echo", params: { name: "echo", arguments: { message: "it's here" } } };

describe("copy JSON", () => {
  it("rebuilds requests, notifications, results and errors as they were on the wire", () => {
    expect(messageOf(request)).toEqual({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { message: "it's here" } } });
    expect(messageOf({ kind: "notification", method: "notifications/initialized" })).toEqual({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(messageOf({ kind: "response", id: "a", method: "tools/call", result: { content: [] } })).toEqual({ jsonrpc: "2.0", id: "a", result: { content: [] } });
    expect(messageOf({ kind: "error", id: 1, error: { code: -1, message: "no" } })).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -1, message: "no" } });
  });

  it("is not offered when the record cannot give the message exactly", () => {
    expect(messageOf({ ...request, params: { truncated: true, bytes: 90000, sha256: "x", preview: "{" } })).toBeNull();
    expect(messageOf({ kind: "response", id: 1 })).toBeNull();
    expect(messageOf({ kind: "invalid", reason: "not JSON" })).toBeNull();
    expect(messageOf({ kind: "unanswered", id: 1 })).toBeNull();
  });
});

describe("copy as curl", () => {
  it("a client's request over HTTP: its URL, session and revision headers, the body quoted for a POSIX shell", () => {
    const curl = curlOf(request, true)!;
    expect(curl.endsWith(" https://mcp.example.com:443/mcp")).toBe(true);
    expect(curl).toContain("-H 'mcp-session-id: s-1'");
    // The shell reads back the body exactly (the quote inside the argument survives).
    const words = execFileSync("/bin/sh", ["-c", `printf '%s\\0' ${curl.replace(/^curl -sS /, "")}`], { encoding: "utf8" }).split("\0").slice(0, -1);
    expect(JSON.parse(words[words.indexOf("--data-binary") + 1]!)).toEqual(messageOf(request));
  });

  it("is not offered for a server's message or a stdio line", () => {
    expect(curlOf({ ...request, direction: "server_to_client" }, true)).toBeNull();
    expect(curlOf({ ...request, transport: "stdio" }, true)).toBeNull();
  });
});
