/**
 * One reading of SSE event boundaries: the enforce-mode framer (src/proxy/sse-framer.ts) judges exactly the
 * events the decoder (src/body/sse-decoder.ts) reads, for every line-end form, however the stream is chunked.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SseFramer } from "../../src/proxy/sse-framer.js";
import { decodeSse, splitAt } from "./sse-harness.js";

interface Framed {
  judged: string[];
  unjudged: string[];
  oversized: number;
}

function frame(chunks: Buffer[], maxEventBytes = 1024): Framed {
  const out: Framed = { judged: [], unjudged: [], oversized: 0 };
  const framer = new SseFramer(
    (raw) => out.judged.push(raw.toString("latin1")),
    maxEventBytes,
    (raw) => out.unjudged.push(raw.toString("latin1")),
    () => out.oversized++,
  );
  for (const chunk of chunks) framer.push(chunk);
  framer.flush();
  return out;
}

/** Where the decoder's events start, and where the framer's judged events start. */
function starts(bytes: Buffer, chunks: Buffer[], maxEventBytes = 1024): { decoder: number[]; framer: number[] } {
  const decoder = decodeSse(chunks, { maxEventBytes, includeComments: true }).flatMap((r) =>
    r.type === "event" ? [r.event.byteOffset!] : [],
  );
  const framed = frame(chunks, maxEventBytes);
  const framer: number[] = [];
  let at = 0;
  for (const raw of framed.judged) {
    // A judged piece with a data line (the stream-initial BOM aside) starts where the decoder's event starts.
    if ((at === 0 ? /(^(\xef\xbb\xbf)?|[\r\n])data/ : /(^|[\r\n])data/).test(raw)) framer.push(at);
    at += raw.length;
  }
  expect(at + framed.unjudged.join("").length).toBe(bytes.length);
  return { decoder, framer };
}

const BOM = "\uFEFF";

const CASES: [label: string, text: string, events: string[]][] = [
  ["LF line ends", "data: a\n\ndata: b\n\n", ["data: a\n\n", "data: b\n\n"]],
  ["CR line ends", "data: a\r\rdata: b\r\r", ["data: a\r\r", "data: b\r\r"]],
  ["CRLF line ends", "data: a\r\n\r\ndata: b\r\n\r\n", ["data: a\r\n\r\n", "data: b\r\n\r\n"]],
  ["a BOM-only first line (blank, as the parser strips the BOM)", `${BOM}\ndata: a\n\n`, [`${BOM}\n`, "data: a\n\n"]],
  ["a BOM before the first field (not a blank line)", `${BOM}data: a\n\n`, [`${BOM}data: a\n\n`]],
  ["a comment inside an event", ": keep-alive\ndata: a\n\n", [": keep-alive\ndata: a\n\n"]],
  ["a comment as its own block", ": ping\n\ndata: a\n\n", [": ping\n\n", "data: a\n\n"]],
];

describe("SSE event boundaries (framer and decoder)", () => {
  it.each(CASES)("%s", (_label, text, events) => {
    const bytes = Buffer.from(text, "utf8");
    const framed = frame([bytes]);
    expect(framed.judged.map((raw) => Buffer.from(raw, "latin1").toString("utf8"))).toEqual(events);
    expect(framed.unjudged).toEqual([]);
    const { decoder, framer } = starts(bytes, [bytes]);
    expect(framer).toEqual(decoder);
  });

  it("a CRLF split across chunks belongs to the blank line before it", () => {
    const chunks = [Buffer.from("data: a\r\n\r"), Buffer.from("\ndata: b\r\n\r\n")];
    expect(frame(chunks).judged).toEqual(["data: a\r\n\r\n", "data: b\r\n\r\n"]);
    const { decoder, framer } = starts(Buffer.concat(chunks), chunks);
    expect(decoder).toEqual([0, 11]);
    expect(framer).toEqual(decoder);
  });

  it("a blank CR line at a chunk end not followed by LF ends the event before the next byte", () => {
    const chunks = [Buffer.from("data: a\r\r"), Buffer.from("data: b\r\r")];
    expect(frame(chunks).judged).toEqual(["data: a\r\r", "data: b\r\r"]);
  });

  it("an event whose blank line is a CR at the very end of the stream is judged, not passed on unjudged", () => {
    const framed = frame([Buffer.from("data: a\n\n"), Buffer.from("data: last\r\r")]);
    expect(framed.judged).toEqual(["data: a\n\n", "data: last\r\r"]);
    expect(framed.unjudged).toEqual([]);
  });

  it("an event over the size limit passes on unjudged, and the decoder drops it too", () => {
    const text = `data: ${"x".repeat(40)}\n\ndata: ok\n\n`;
    const chunks = splitAt(Buffer.from(text), [8, 16, 24, 32, 40, 48]);
    const framed = frame(chunks, 20);
    expect(framed.oversized).toBe(1);
    expect(framed.unjudged.join("")).toBe(`data: ${"x".repeat(40)}\n\n`);
    expect(framed.judged).toEqual(["data: ok\n\n"]);
    const records = decodeSse(chunks, { maxEventBytes: 20 });
    expect(records.filter((r) => r.type === "problem").map((r) => r.type === "problem" && r.code)).toEqual(["event_too_large"]);
    expect(records.flatMap((r) => (r.type === "event" ? [r.event.data] : []))).toEqual(["ok"]);
  });

  it("for any mix of line ends, BOM and comments, and any chunking, both start events at the same bytes", () => {
    const piece = fc.constantFrom("data: a", "data: {\"x\":1}", ": c", "event: e", "id: 7", "\n", "\r", "\r\n", BOM, "x");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), fc.array(fc.nat(), { maxLength: 6 }), (parts, cuts) => {
        const bytes = Buffer.from(parts.join(""), "utf8");
        const { decoder, framer } = starts(bytes, splitAt(bytes, cuts), 1 << 20);
        expect(framer).toEqual(decoder);
      }),
      { numRuns: 1500 },
    );
  });
});
