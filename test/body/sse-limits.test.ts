import { describe, expect, it } from "vitest";
import { createSseDecoder, type SseRecord } from "../../src/body/sse-decoder.js";

const MiB = 1024 * 1024;
const nextEvent = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/initialized"}\n\n';

/** Feeds `repeat` copies of `chunk` (the same buffer, so the test itself stays small) and tracks peak heap growth. */
function feedRepeated(
  records: SseRecord[],
  maxEventBytes: number,
  parts: Array<{ chunk: Buffer; repeat?: number }>,
): { peakHeapGrowth: number; bytes: number } {
  const decoder = createSseDecoder({ maxEventBytes, onRecord: (record) => records.push(record) });
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  for (const { chunk, repeat = 1 } of parts) {
    for (let i = 0; i < repeat; i++) {
      decoder.data(chunk);
      if (i % 16 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
  }
  decoder.end();
  return { peakHeapGrowth: Math.max(peak, process.memoryUsage().heapUsed) - before, bytes: decoder.bytes };
}

/** `size / 64` whole lines of 64 bytes each. */
function dataLines(size: number): Buffer {
  const line = `data: ${"a".repeat(57)}\n`;
  return Buffer.from(line.repeat(size / line.length));
}

describe("SSE decoder memory bounds", () => {
  it("drops an event that never ends (50 MB of data lines, no blank line), keeping memory bounded", () => {
    const records: SseRecord[] = [];
    const chunk = dataLines(64 * 1024);
    const { peakHeapGrowth, bytes } = feedRepeated(records, MiB, [{ chunk, repeat: 800 }]);
    expect(bytes).toBe(800 * 64 * 1024);
    expect(records).toEqual([
      {
        type: "problem",
        code: "event_too_large",
        message: expect.stringContaining("exceeds 1048576 bytes"),
        byteOffset: 0,
      },
      { type: "incomplete", byteOffset: 0, bytes: 800 * 64 * 1024 },
    ]);
    // Buffering it all would grow the heap by over 100 MiB.
    expect(peakHeapGrowth).toBeLessThan(24 * MiB);
  });

  it("resynchronises at the blank line after an oversized multi-line event and decodes the next event", () => {
    const records: SseRecord[] = [];
    const chunk = dataLines(64 * 1024);
    const oversized = 160 * chunk.length;
    feedRepeated(records, MiB, [{ chunk, repeat: 160 }, { chunk: Buffer.from(`\n${nextEvent}`) }]);
    expect(records).toEqual([
      { type: "problem", code: "event_too_large", message: expect.any(String), byteOffset: 0 },
      {
        type: "event",
        event: {
          event: "message",
          data: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
          byteOffset: oversized + 1,
        },
      },
    ]);
  });

  const tenMegabyteEvent = Buffer.from(`data: ${"x".repeat(10 * MiB)}\n\n${nextEvent}`);
  const chunkings: Array<[string, Buffer[]]> = [
    ["in one chunk", [tenMegabyteEvent]],
    [
      "in 64 KiB chunks",
      Array.from({ length: Math.ceil(tenMegabyteEvent.length / 65536) }, (_, i) =>
        tenMegabyteEvent.subarray(i * 65536, (i + 1) * 65536),
      ),
    ],
  ];

  it.each(chunkings)("drops a 10 MB single-line event %s and decodes the event after it", (_, chunks) => {
    const records: SseRecord[] = [];
    const { peakHeapGrowth } = feedRepeated(
      records,
      MiB,
      chunks.map((chunk) => ({ chunk })),
    );
    expect(records).toEqual([
      { type: "problem", code: "event_too_large", message: expect.any(String), byteOffset: 0 },
      {
        type: "event",
        event: expect.objectContaining({ event: "message", byteOffset: 10 * MiB + "data: \n\n".length }),
      },
    ]);
    // Buffering the whole event would grow the heap by over 20 MiB.
    expect(peakHeapGrowth).toBeLessThan(8 * MiB);
  });

  it("keeps an event of just under the limit", () => {
    const records: SseRecord[] = [];
    const event = Buffer.from(`data: ${"y".repeat(MiB - 8)}\n\n`);
    expect(event.length).toBe(MiB);
    feedRepeated(records, MiB, [{ chunk: event }]);
    expect(records.map((record) => record.type)).toEqual(["event"]);
  });
});
