import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import v8 from "node:v8";
import vm from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogSink } from "../../src/log/logger.js";
import { DROP_REPORT_INTERVAL_MS, RecordStream } from "../../src/sinks/record-stream.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";
import { waitUntil } from "../helpers/wait-until.js";

const lines = (n: number): string[] => Array.from({ length: n }, (_, i) => `{"event":"rpc","n":${i}}\n`);
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe("record stream", () => {
  it("lets go of each line once handed over (long lines of a few requests held 2 MB each until 4,096 had passed)", async () => {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as () => void;
    const stream = new RecordStream();
    let handed = 0;
    stream.subscribe(() => void handed++, { name: "otlp" });
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 40; i++) stream.publish(`{"event":"rpc","method":"${String(i).padEnd(1_000_000, "m")}"}`);
    await waitUntil(() => handed === 40, { what: "the lines handed over" });
    gc();
    const kept = process.memoryUsage().heapUsed - before;
    expect(kept).toBeLessThan(8 * 1024 * 1024); // 40 MB of lines went by
    stream.close();
  });

  it("a stuck subscriber holds long lines up to its size bound, not only its count", () => {
    const stream = new RecordStream();
    const stuck = stream.subscribe(() => new Promise<void>(() => undefined), { maxQueue: 10_000, maxQueueChars: 1 << 20, name: "otlp" });
    const long = `{"event":"rpc","method":"${"m".repeat(100_000)}"}\n`;
    for (let i = 0; i < 100; i++) stream.publish(long);
    // 1 MiB holds ten such lines; the first is handed over later, so none has left the queue yet.
    expect(100 - stuck.dropped).toBe(10);
    stuck.stop();
  });

  it("hands every line to a subscriber later, in order, without the newline", async () => {
    const stream = new RecordStream();
    const got: string[] = [];
    stream.subscribe((l) => void got.push(l));
    for (const l of lines(3)) stream.publish(l);
    expect(got).toEqual([]); // never inside publish
    await tick();
    expect(got).toEqual(['{"event":"rpc","n":0}', '{"event":"rpc","n":1}', '{"event":"rpc","n":2}']);
  });

  it("a subscriber that never finishes does not slow publishing: its queue is bounded, drops counted and reported at close", async () => {
    const stream = new RecordStream();
    const reports: { subscriber: string; dropped: number }[] = [];
    stream.setDropReporter((r) => reports.push(r));
    const stuck = stream.subscribe(() => new Promise<void>(() => undefined), { maxQueue: 100, name: "stuck" });
    const fast: string[] = [];
    stream.subscribe((l) => void fast.push(l), { name: "fast", maxQueue: 200_000 });
    const started = performance.now();
    for (const l of lines(100_000)) stream.publish(l);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(2_000);
    // Drained 512 lines a turn: on a loaded machine that takes longer than a fixed wait.
    await waitUntil(() => fast.length === 100_000, { what: "the fast subscriber's lines" });
    // Publishing is synchronous: 100 lines fit the queue, the rest are dropped.
    expect(stuck.dropped).toBe(100_000 - 100);
    stream.close();
    expect(reports).toEqual([{ subscriber: "stuck", dropped: 100_000 - 100, errors: 0 }]);
  });

  it("a throwing subscriber loses nothing of the others', and its errors are reported", async () => {
    const stream = new RecordStream();
    const reports: { subscriber: string; dropped: number; errors: number }[] = [];
    stream.setDropReporter((r) => reports.push(r));
    stream.subscribe(() => {
      throw new Error("boom");
    }, { name: "thrower" });
    const got: string[] = [];
    stream.subscribe((l) => void got.push(l));
    for (const l of lines(10)) stream.publish(l);
    await tick();
    await tick();
    expect(got.length).toBe(10);
    stream.close();
    expect(reports).toEqual([{ subscriber: "thrower", dropped: 0, errors: 10 }]);
  });

  it("reports drops once per interval while they happen", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const stream = new RecordStream();
    const reports: number[] = [];
    stream.setDropReporter((r) => reports.push(r.dropped));
    stream.subscribe(() => new Promise<void>(() => undefined), { maxQueue: 1 });
    for (const l of lines(5)) stream.publish(l);
    await tick();
    vi.advanceTimersByTime(DROP_REPORT_INTERVAL_MS);
    vi.advanceTimersByTime(DROP_REPORT_INTERVAL_MS); // nothing new: no second report
    for (const l of lines(2)) stream.publish(l);
    vi.advanceTimersByTime(DROP_REPORT_INTERVAL_MS);
    expect(reports).toEqual([4, 1]);
    stream.close();
  });

  it("is fed by the log sink with each line as written (audit chain included), and a failing subscriber leaves the file sink whole", async () => {
    const out = new PassThrough();
    const written: string[] = [];
    out.on("data", (c: Buffer) => written.push(...c.toString().split("\n").filter(Boolean)));
    const sink = createLogSink({ stream: out, auditChain: { dir: mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-stream-")) } });
    const seen: string[] = [];
    sink.records.subscribe((l) => void seen.push(l));
    sink.records.subscribe(() => {
      throw new Error("subscriber failure");
    });
    for (let i = 0; i < 50; i++) sink.logger.info({ event: "rpc", n: i });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await sink.flush();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const records = written.map((l) => JSON.parse(l) as { event: string; n?: number; seq: number });
    expect(records.filter((r) => r.event === "rpc").map((r) => r.n)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(seen).toEqual(written.slice(0, 50));
    expect(records.find((r) => r.event === "record_stream_drops")).toMatchObject({ errors: 50, dropped: 0 });
    expectRecordsMatchSchemas(records.filter((r) => r.event === "record_stream_drops"), "record_stream_drops");
  });
});
