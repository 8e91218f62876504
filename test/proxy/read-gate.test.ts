/**
 * A closed read gate stops reading the sender itself: the socket under the request is read no more (so its
 * bytes pile up in the sender, not in the proxy), and once it opens every byte arrives, in order.
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { coalesced } from "../../src/proxy/coalesce.js";
import { ReadGate } from "../../src/proxy/read-gate.js";
import { waitUntil } from "../helpers/wait-until.js";

const BODY_BYTES = 32 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024);

describe("an exchange's read gate", () => {
  it("stops the socket being read while closed, and passes every byte in order once open", async () => {
    const gate = new ReadGate();
    let received = 0;
    const hash = createHash("sha256");
    let socketRead = (): number => 0;
    let release: (() => void) | null = null;
    const done = new Promise<void>((resolve) => {
      const server = http.createServer((req, res) => {
        socketRead = () => req.socket.bytesRead;
        const body = coalesced(req, gate);
        body.on("data", (chunk: Buffer) => {
          received += chunk.length;
          hash.update(chunk);
          // Closed as soon as the body starts: what was read by then may still come, nothing more.
          release ??= gate.hold();
        });
        body.on("end", () => {
          res.end("ok");
          server.close();
          resolve();
        });
      });
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo;
        const req = http.request({ host: "127.0.0.1", port, method: "POST", path: "/" });
        req.on("response", (r) => r.resume());
        const sent = createHash("sha256");
        let written = 0;
        const pump = (): void => {
          while (written < BODY_BYTES) {
            const chunk = Buffer.from(CHUNK.map((_, i) => (written + i) & 0xff));
            sent.update(chunk);
            written += chunk.length;
            if (!req.write(chunk)) return void req.once("drain", pump);
          }
          req.end();
          sentHash = sent.digest("hex");
        };
        pump();
      });
    });
    let sentHash = "";
    await waitUntil(() => release !== null, { timeoutMs: 10_000, what: "the body to start" });
    // Closed: reads stop once the small buffers under the request are full.
    let last = -1;
    for (let i = 0; i < 100 && socketRead() !== last; i++) {
      last = socketRead();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(socketRead()).toBe(last);
    const readWhileClosed = socketRead();
    const receivedWhileClosed = received;
    expect(readWhileClosed).toBeLessThan(BODY_BYTES / 4);
    expect(receivedWhileClosed).toBeLessThan(256 * 1024);
    release!();
    await done;
    expect(received).toBe(BODY_BYTES);
    expect(hash.digest("hex")).toBe(sentHash);
    console.log(`read gate: ${(readWhileClosed / 2 ** 20).toFixed(2)} MiB read from the socket and ${(receivedWhileClosed / 1024).toFixed(0)} KiB passed on while closed, of ${BODY_BYTES / 2 ** 20} MiB sent`);
  }, 30_000);
});

describe("an exchange's read gate closed before its body is read", () => {
  it("keeps the body unread until it opens (an exchange paused from its start: its peer is past its share)", async () => {
    const gate = new ReadGate();
    const release = gate.hold();
    const source = new PassThrough();
    const body = coalesced(source, gate);
    let received = 0;
    body.on("data", (chunk: Buffer) => (received += chunk.length));
    source.write(Buffer.alloc(64 * 1024));
    await new Promise((r) => setTimeout(r, 20));
    expect(received).toBe(0);
    expect(source.readableFlowing).toBe(false);
    release();
    await waitUntil(() => received === 64 * 1024, { timeoutMs: 5_000, what: "the body once the gate opens" });
  });
});
