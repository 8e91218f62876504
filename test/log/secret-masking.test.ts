import { describe, expect, it } from "vitest";
import { rpcRecord } from "../../src/records/rpc-record.js";
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

describe("a string that held several secrets is named after all of them", () => {
  const note = `keys ${githubToken} and ${awsKey}`;

  it("in a judged payload (the detector's masks) and in an invalid message (masked by shape)", () => {
    const call = judged({ jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "deploy", arguments: { note } } }, "client_to_server");
    const record = rpcRecord(call, { payloads: "full", maxPayloadBytes: 65536 });
    expect(record.params).toMatchObject({ arguments: { note: "[redacted: aws_access_key_id, github_token]" } });
    const invalid = judged({ id: 12, method: "tools/call", params: { arguments: { note } } }, "client_to_server");
    expect(rpcRecord(invalid, { payloads: "full", maxPayloadBytes: 65536 }).message).toMatchObject({
      params: { arguments: { note: "[redacted: aws_access_key_id, github_token]" } },
    });
  });
});

describe("secrets the detector did not see never reach the record", () => {
  it("a key past the scanner's bound: only a preview from the scanned start is written, in every mode", () => {
    const e = judged({ jsonrpc: "2.0", id: 8, result: { content: [{ type: "text", text: "x".repeat(2_100_000) }, { type: "text", text: `key ${awsKey}` }] } }, "server_to_client", "tools/call");
    for (const payloads of ["full", "truncated"] as const) {
      const record = rpcRecord(e, { payloads, maxPayloadBytes: 65536 });
      expect(JSON.stringify(record)).not.toContain(awsKey);
      expect(record.result).toMatchObject({ truncated: true, bytes: expect.any(Number) });
      expect(Buffer.byteLength((record.result as { preview: string }).preview)).toBeLessThanOrEqual(65536);
    }
  });

  it("masks a key in an invalid message, which no detector scans", () => {
    const raw = { id: 3, method: "tools/call", params: { arguments: { note: `use ${awsKey}`, token2: githubToken } } };
    const e = judged(raw, "client_to_server");
    expect(e.kind).toBe("invalid");
    for (const payloads of ["full", "truncated"] as const) {
      const record = rpcRecord(e, { payloads, maxPayloadBytes: 65536 });
      const text = JSON.stringify(record);
      expect(text).not.toContain(awsKey);
      expect(text).not.toContain(githubToken);
      expect(record.message).toMatchObject({ params: { arguments: { note: "[redacted: aws_access_key_id]" } } });
    }
  });
});
