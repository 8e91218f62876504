/**
 * Requests that asked for a task and are never answered are held in bytes, not only in count: a peer sending
 * task requests with megabyte tool names (one session each, never answered) must not keep them alive past
 * the table's byte bound once the correlator has let them go. Measured on the heap after a collection.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { McpTracker, type TrackedContext } from "../../../src/mcp/tracker.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const TABLE_BYTES = 4 * 1024 * 1024;

describe("requests waiting for their task", () => {
  it("40 task requests with 1 MB tool names, never answered, hold no more than the table's bytes", () => {
    const tracker = new McpTracker({ rpc: () => undefined, session: () => undefined }, { maxSessions: 1_000, maxPending: 1_000, maxTableBytes: TABLE_BYTES });
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 40; i++) {
      const ctx: TrackedContext = { flow: `f${i}`, transport: "streamable-http", server: "127.0.0.1:9", path: "/mcp", session: `s${i}`, protocolVersion: "2025-11-25", direction: "client_to_server", scope: `s${i}` };
      // Parsed from the wire's text, as the proxy reads a body.
      const raw: unknown = JSON.parse(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${i}${"t".repeat(1024 * 1024)}","arguments":{},"task":{}}}`);
      tracker.message(ctx, raw, 1024 * 1024);
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    expect(grown).toBeLessThan(3 * TABLE_BYTES);
  });
});
