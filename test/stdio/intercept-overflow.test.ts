/**
 * stdio with `--intercept`: lines behind a held one wait for it, up to a bound in bytes; past it a line is not
 * forwarded. An answer in such a line must still reach whoever waits for it, as an error, never as silence,
 * and an error goes to the peer that asked, never to the one that answered.
 */
import { describe, expect, it } from "vitest";
import { MessagePipeline } from "../../src/pipeline/message-pipeline.js";
import { shippedPolicy } from "../pipeline/pipeline-fixtures.js";
import { StdioTap, type LineIntercept } from "../../src/stdio/stdio-tap.js";
import { INTERCEPT_DROPPED_CODE } from "../../src/mcp/jsonrpc.js";

const HELD = new Set(["notifications/message", "notifications/roots/list_changed"]);

function interceptedTap() {
  const toServer: string[] = [];
  const toClient: string[] = [];
  const releases: (() => void)[] = [];
  const intercept: LineIntercept = {
    matches: (judged) => judged.some((j) => HELD.has(j.event.method ?? "")),
    hold: () => new Promise((resolve) => releases.push(() => resolve({ send: "original" }))),
    maxWaitingBytes: 300,
  };
  const pipeline = new MessagePipeline({
    policy: shippedPolicy(),
    removeDeniedTools: true,
    payloads: { payloads: "truncated", maxPayloadBytes: 1000 },
    limits: { maxPending: 10, maxSessions: 10 },
    output: { rpc: () => {}, session: () => {} },
  });
  const tap = new StdioTap({
    pipeline,
    server: "stdio:t",
    session: "s",
    maxInspectBytes: 4096,
    intercept,
    toServer: (b) => toServer.push(b.toString()),
    toClient: (b) => toClient.push(b.toString()),
    onError: () => {},
  });
  const lines = (out: string[]) => out.join("").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { tap, releases, sent: { server: () => lines(toServer), client: () => lines(toClient) } };
}

const line = (m: unknown): Buffer => Buffer.from(`${JSON.stringify(m)}\n`);
const big = "y".repeat(400);

describe("stdio --intercept: a line past what may wait behind a held one", () => {
  it("a server's answer not forwarded reaches the client that asked as error -32054", async () => {
    const { tap, releases, sent } = interceptedTap();
    tap.fromClient(line({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { message: "hi" } } }));
    tap.fromServer(line({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "held" } }));
    tap.fromServer(line({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: big }] } }));
    expect(sent.client()).toContainEqual(expect.objectContaining({ id: 7, error: expect.objectContaining({ code: INTERCEPT_DROPPED_CODE }) }));
    releases.forEach((r) => r());
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.client().map((m) => m.method ?? m.id)).toEqual([7, "notifications/message"]);
  });

  it("a client's answer to a server's request not forwarded: the server gets the error, the client hears nothing of it", async () => {
    const { tap, releases, sent } = interceptedTap();
    tap.fromServer(line({ jsonrpc: "2.0", id: "s1", method: "sampling/createMessage", params: { messages: [], maxTokens: 5 } }));
    tap.fromClient(line({ jsonrpc: "2.0", method: "notifications/roots/list_changed" }));
    tap.fromClient(line({ jsonrpc: "2.0", id: "s1", result: { role: "assistant", content: { type: "text", text: big }, model: "m" } }));
    expect(sent.server()).toContainEqual(expect.objectContaining({ id: "s1", error: expect.objectContaining({ code: INTERCEPT_DROPPED_CODE }) }));
    expect(sent.client().filter((m) => m.error !== undefined)).toEqual([]);
    releases.forEach((r) => r());
  });
});
