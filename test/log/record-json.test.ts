import { Writable } from "node:stream";
import fc from "fast-check";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { escapeLine } from "../../src/log/escape-line.js";
import { serializeRecordsOnce } from "../../src/log/record-json.js";

/** A logger as createLogSink makes it (fixed time), writing its lines into `lines`. */
function logger(lines: string[], once: boolean): pino.Logger {
  const sink = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      lines.push(String(chunk));
      done();
    },
    decodeStrings: false,
  });
  const log = pino(
    { base: undefined, timestamp: () => ',"time":"2026-01-01T00:00:00.000Z"', formatters: { level: (label) => ({ level: label }) }, messageKey: "msg", hooks: { streamWrite: escapeLine } },
    sink,
  );
  if (once) serializeRecordsOnce(log, (record) => record);
  return log;
}

/** Strings of any UTF-16 code units: controls, quotes, backslashes, lone surrogates, long and short. */
const text = fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme-ascii" }), fc.constantFrom("\u2028", "a\"b\\c", "\ud800", "x".repeat(50) + "\udc00", "\u0000\u001f\u007f"));
const member = fc.oneof(
  text,
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constant(() => 1),
  fc.array(fc.oneof(text, fc.double(), fc.constant(undefined)), { maxLength: 4 }),
  fc.dictionary(text, fc.oneof(text, fc.integer(), fc.constant(undefined)), { maxKeys: 4 }),
);
const record = fc.dictionary(fc.oneof(text, fc.constantFrom("level", "time", "msg", "0", "12", "__proto__")), member, { maxKeys: 8 });

describe("serializeRecordsOnce", () => {
  it("writes every record exactly as pino does, member by member", () => {
    fc.assert(
      fc.property(record, fc.constantFrom("info", "warn", "error") as fc.Arbitrary<"info" | "warn" | "error">, (rec, level) => {
        const general: string[] = [];
        const once: string[] = [];
        logger(general, false)[level](rec);
        logger(once, true)[level](rec);
        expect(once).toEqual(general);
      }),
      { numRuns: 2000 },
    );
  });

  it("leaves to pino what it treats on its own: messages, errors, cycles, bigints, toJSON", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const cases: [Record<string, unknown>, string?][] = [
      [{ a: 1 }, "a message"],
      [{ err: new Error("boom"), a: 1 }],
      [cyclic],
      [{ n: 10n }],
      [{ toJSON: () => ({ other: 1 }), a: 1 }],
      [{}],
      [Object.assign(Object.create(null) as object, { a: "b" })],
    ];
    for (const [rec, msg] of cases) {
      const general: string[] = [];
      const once: string[] = [];
      logger(general, false).info(rec, msg);
      logger(once, true).info(rec, msg);
      expect(once.map((l) => l.replace(/"stack":"[^"]*"/, ""))).toEqual(general.map((l) => l.replace(/"stack":"[^"]*"/, "")));
    }
  });

  it("runs the preparation once per record, before serializing", () => {
    const lines: string[] = [];
    const log = logger(lines, false);
    let calls = 0;
    serializeRecordsOnce(log, (r) => (calls++, { ...r, added: true }));
    log.info({ a: 1 });
    expect(calls).toBe(1);
    expect(lines[0]).toBe('{"level":"info","time":"2026-01-01T00:00:00.000Z","a":1,"added":true}\n');
  });
});
