/**
 * An SSE stream that ends inside a long block (issue 33): the block is read for its whole `retry:`, `id:` and
 * `event:` lines on its bytes (src/body/sse-long-tail.ts), not decoded and parsed: 40 streams each ending
 * inside an 8 MiB `data:` line held the loop for seconds, some 30–100 ms a stream.
 */
import { describe, expect, it } from "vitest";
import { createSseDecoder, type SseRecord } from "../../src/body/sse-decoder.js";

const MiB = 1024 * 1024;

function threadCpuMs(action: () => void): number {
  const before = process.threadCpuUsage();
  action();
  const after = process.threadCpuUsage();
  return (after.user - before.user + after.system - before.system) / 1000;
}

describe("an SSE stream ending inside an 8 MiB block", () => {
  it("ends in a few milliseconds and reports the retry a client now uses, saying the data was not inspected", () => {
    const records: SseRecord[] = [];
    const decoder = createSseDecoder({ maxEventBytes: 8 * MiB, onRecord: (r) => records.push(r) });
    const head = Buffer.from("event: message\nretry: 2500\ndata: ");
    decoder.data(head);
    const block = Buffer.alloc(8 * MiB - 1024, 0x61);
    for (let at = 0; at < block.length; at += 64 * 1024) decoder.data(block.subarray(at, at + 64 * 1024));
    // Before: the block decoded to text and parsed, 28–100 ms; now 2–4 ms.
    expect(threadCpuMs(() => decoder.end())).toBeLessThan(15);
    expect(records).toEqual([{ type: "incomplete", byteOffset: 0, bytes: head.length + 8 * MiB - 1024, uninspected: { event: "message", retry: 2500 } }]);
  });
});

describe("the record of a long tail", () => {
  it("says its event name with credentials in it masked, as free text in any record is", async () => {
    const { createBodyDecoder } = await import("../../src/body/index.js");
    const problems: string[] = [];
    const tap = createBodyDecoder({ contentType: "text/event-stream", contentEncoding: undefined, maxInspectBytes: 8 * MiB, maxEventBytes: 8 * MiB, onMessage: () => undefined, onProblem: (p) => problems.push(p.message) });
    const token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
    tap.data(Buffer.from(`event: ${token}\nretry: 100\ndata: `));
    tap.data(Buffer.alloc(128 * 1024, 0x61));
    tap.end();
    await tap.done;
    const tail = problems.find((m) => m.includes("only its field lines"));
    expect(tail).toContain("retry: 100 ms");
    expect(tail).toContain("event: ");
    expect(tail).not.toContain(token);
  });
});
