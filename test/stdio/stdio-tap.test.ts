/** A stage that throws on a line never takes the relay down; enforce mode keeps that line back. */
import { describe, expect, it } from "vitest";
import { MessagePipeline } from "../../src/pipeline/message-pipeline.js";
import { shippedPolicy } from "../pipeline/pipeline-fixtures.js";
import { StdioTap } from "../../src/stdio/stdio-tap.js";
import { UNREADABLE_CODE } from "../../src/mcp/jsonrpc.js";

function tapWith(enforce: boolean) {
  const errors: string[] = [];
  const toServer: string[] = [];
  const toClient: string[] = [];
  // The stage after the judgement fails: the record of tools/list cannot be written.
  const pipeline = new MessagePipeline({
    policy: shippedPolicy(),
    removeDeniedTools: true,
    payloads: { payloads: "truncated", maxPayloadBytes: 1000 },
    // Small tables without per-peer shares: what fails here is a stage, not a bound.
    limits: { maxPending: 10, maxSessions: 10, peerShareDivisor: 1 },
    output: {
      rpc: (record) => {
        if (record.method === "tools/list") throw new Error("pin store: EACCES");
        if (record.kind === "invalid") throw new Error("log: EIO");
      },
      session: () => {},
    },
  });
  const tap = new StdioTap({
    pipeline,
    server: "stdio:t",
    session: "s",
    maxInspectBytes: 1000,
    ...(enforce ? { enforce: { removeDeniedTools: true } } : {}),
    toServer: (b) => toServer.push(b.toString()),
    toClient: (b) => toClient.push(b.toString()),
    onError: (err) => errors.push((err as Error).message),
  });
  return { tap, errors, toServer, toClient };
}

const LIST = '{"jsonrpc":"2.0","id":9,"method":"tools/list"}\n';
const PING = '{"jsonrpc":"2.0","id":10,"method":"ping"}\n';

describe("stdio tap: a failing stage", () => {
  it("monitor mode: reported, the bytes already forwarded, the next line handled", () => {
    const { tap, errors, toServer } = tapWith(false);
    tap.fromClient(Buffer.from(LIST + PING));
    expect(errors).toEqual(["pin store: EACCES"]);
    expect(toServer.join("")).toBe(LIST + PING);
  });

  it("enforce mode: the line stays back, its request gets an error, the next line passes", () => {
    const { tap, errors, toServer, toClient } = tapWith(true);
    tap.fromClient(Buffer.from(LIST + PING));
    expect(errors).toEqual(["pin store: EACCES"]);
    expect(toServer.join("")).toBe(PING);
    expect(JSON.parse(toClient.join(""))).toMatchObject({ id: 9, error: { code: UNREADABLE_CODE, message: expect.stringMatching(/internal error while judging it/) } });
  });

  it("a line too large to read: a failing record stage is reported, not thrown at the relay", () => {
    for (const enforce of [false, true]) {
      const { tap, errors, toServer, toClient } = tapWith(enforce);
      const big = `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"m":"${"x".repeat(2000)}"}}}\n`;
      expect(() => tap.fromClient(Buffer.from(big + PING))).not.toThrow();
      expect(errors).toEqual(["log: EIO"]);
      if (enforce) {
        expect(toServer.join("")).toBe(PING);
        expect(JSON.parse(toClient.join(""))).toMatchObject({ id: 11, error: { code: UNREADABLE_CODE } });
      } else {
        expect(toServer.join("")).toBe(big + PING);
      }
    }
  });
});
