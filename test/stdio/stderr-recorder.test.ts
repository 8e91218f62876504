import { describe, expect, it } from "vitest";
import type { Logger } from "../../src/log/logger.js";
import { REDACTED } from "../../src/log/redact.js";
import { StderrRecorder } from "../../src/stdio/stderr-recorder.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

function recorder(limits = { maxLineBytes: 64, linesPerSecond: 3 }) {
  const out: Record<string, unknown>[] = [];
  /** The records as pino writes them, with their level. */
  const written: Record<string, unknown>[] = [];
  const at = (level: string) => (r: Record<string, unknown>) => {
    out.push(r);
    written.push({ level, time: new Date(0).toISOString(), ...r });
  };
  const log = { info: at("info"), warn: at("warn") } as unknown as Logger;
  let now = 0;
  const rec = new StderrRecorder(log, { server: "stdio:x", session: "s" }, limits, () => now);
  return { out, written, rec, tick: (ms: number) => (now += ms) };
}

describe("stdio: stderr records", () => {
  it("one record per line, split across reads, credentials redacted", () => {
    const { out, rec } = recorder();
    rec.data(Buffer.from("Authorization: Bearer abc.def-123\r\nsta"));
    rec.data(Buffer.from("rted\n"));
    rec.end();
    expect(out).toEqual([
      { event: "stderr", server: "stdio:x", session: "s", line: `Authorization: Bearer ${REDACTED}`, bytes: 34 },
      { event: "stderr", server: "stdio:x", session: "s", line: "started", bytes: 7 },
    ]);
  });

  it("a line with a secret the detector knows is replaced whole, as a payload string is", () => {
    const { out, rec } = recorder({ maxLineBytes: 200, linesPerSecond: 10 });
    const key = ["AKIA", "IOSFODNN7", "EXAMPLE"].join("");
    rec.data(Buffer.from(`using key ${key} for s3\n`));
    expect(JSON.stringify(out)).not.toContain(key);
    expect(out[0]!.line).toBe("[redacted: aws_access_key_id]");
  });

  it("long lines are cut, a flood is counted rather than written", () => {
    const { out, written, rec, tick } = recorder();
    rec.data(Buffer.from(`${"a".repeat(200)}\n`));
    for (let i = 0; i < 10; i++) rec.data(Buffer.from(`line ${i}\n`));
    tick(1000);
    rec.data(Buffer.from("later\n"));
    rec.end();
    expect(out[0]).toMatchObject({ line: "a".repeat(64), bytes: 201, truncated: true });
    expect(out.slice(1, 3).map((r) => r.line)).toEqual(["line 0", "line 1"]);
    expect(out[3]).toMatchObject({ line: "later", suppressedLines: 8 });
    expect(out).toHaveLength(4);
    expectRecordsMatchSchemas(written, "stderr");
  });

  it("a flood that ends the stream is counted in a record of its own, at warn", () => {
    const { out, written, rec } = recorder();
    for (let i = 0; i < 5; i++) rec.data(Buffer.from(`line ${i}\n`));
    rec.end();
    expect(written.at(-1)).toEqual({ level: "warn", time: new Date(0).toISOString(), event: "stderr", server: "stdio:x", session: "s", suppressedLines: 2 });
    expect(out).toHaveLength(4);
    expectRecordsMatchSchemas(written, "stderr");
  });
});
