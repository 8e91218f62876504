/**
 * A read gate that opens (its peer's turn back: read-scheduler.ts; or the waiting budget's pause over) reads
 * the body on only if its receiver wants more: opening it used to resume the source whatever the receiver's
 * back-pressure, so a body whose receiver reads nothing grew in the proxy by a socket read each time its
 * sender's turn came back.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Readable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { coalesced } from "../../src/proxy/coalesce.js";
import { ReadGate } from "../../src/proxy/read-gate.js";
import { waitUntil } from "../helpers/wait-until.js";

const CHUNK = Buffer.alloc(64 * 1024, 0x61);
const SENT_BYTES = 64 * 1024 * 1024;

describe("a body whose receiver reads nothing", () => {
  let server: http.Server | null = null;
  let client: http.ClientRequest | null = null;
  afterAll(() => {
    client?.destroy();
    server?.closeAllConnections();
    server?.close();
  });

  it("is held at its receiver's bound however often its read gate closes and opens", async () => {
    const turn = new ReadGate();
    let body: Readable | null = null;
    server = http.createServer((req) => {
      // Nothing reads `body`: its receiver is stalled.
      body = coalesced(req, new ReadGate(), { turn: { gate: turn, held: { chunks: 0 }, spent: () => undefined } });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    client = http.request({ host: "127.0.0.1", port, method: "POST", path: "/" });
    client.on("error", () => undefined);
    let written = 0;
    const pump = (): void => {
      while (written < SENT_BYTES) {
        written += CHUNK.length;
        if (!client!.write(CHUNK)) return void client!.once("drain", pump);
      }
    };
    pump();
    await waitUntil(() => body !== null && body.readableLength > 0, { timeoutMs: 10_000, what: "the body to start" });
    const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10));
    await settle();
    const bound = body!.readableHighWaterMark + 2 * CHUNK.length;
    for (let i = 0; i < 30; i++) {
      const release = turn.hold();
      await settle();
      release();
      await settle();
    }
    console.log(`held for a receiver that reads nothing: ${(body!.readableLength / 1024).toFixed(0)} KiB (bound ${bound / 1024} KiB)`);
    expect(body!.readableLength).toBeLessThanOrEqual(bound);
  }, 20_000);
});
