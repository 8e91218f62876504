import { describe, expect, it } from "vitest";
import { rpcRecord } from "../../src/log/rpc-record.js";
import { classifyMessage } from "../../src/mcp/jsonrpc.js";
import type { RpcEvent } from "../../src/mcp/rpc-event.js";
import { createPolicy } from "../../src/policy/create-policy.js";
import { parsePolicy } from "../../src/policy/load-config.js";

// Built at run time so that no complete key sits in the source.
const awsKey = ["AKIA", "Z7QW3RTY5UIOPL2K"].join("");
const githubToken = ["ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].join("");

function judged(raw: Record<string, unknown>, direction: RpcEvent["direction"], method?: string): RpcEvent {
  const message = classifyMessage(raw);
  const e: RpcEvent = {
    flow: "f",
    transport: "streamable-http",
    server: "mcp.example.com:443",
    path: "/mcp",
    session: "s",
    protocolVersion: "2025-11-25",
    direction,
    kind: message.kind,
    bytes: JSON.stringify(raw).length,
    raw,
    message,
    ...(message.kind === "request" ? { id: message.id, method: message.method } : {}),
    ...(method ? { method } : {}),
  };
  e.decision = createPolicy(parsePolicy("detectors: { secrets: flag }"), { pins: null }).judge(e);
  return e;
}

describe("secrets found in payloads never reach the record", () => {
  it("masks a key pasted into a tool argument, in every payload mode, and keeps the rest", () => {
    const e = judged(
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "deploy", arguments: { note: `use ${awsKey} please`, region: "eu-west-1" } } },
      "client_to_server",
    );
    expect(e.decision?.action).toBe("flag");
    for (const payloads of ["full", "truncated"] as const) {
      const record = rpcRecord(e, { payloads, maxPayloadBytes: 65536 });
      const text = JSON.stringify(record);
      expect(text).not.toContain(awsKey);
      expect(record.params).toMatchObject({ name: "deploy", arguments: { note: "[redacted: aws_access_key_id]", region: "eu-west-1" } });
    }
    expect(JSON.stringify(rpcRecord(e, { payloads: "truncated", maxPayloadBytes: 40 }))).not.toContain(awsKey);
  });

  it("masks a token in a tool result", () => {
    const e = judged({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: `token: ${githubToken}` }] } }, "server_to_client", "tools/call");
    const text = JSON.stringify(rpcRecord(e, { payloads: "full", maxPayloadBytes: 65536 }));
    expect(text).not.toContain(githubToken);
    expect(text).toContain("[redacted: github");
  });
});
