import { createParser, type EventSourceMessage } from "eventsource-parser";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SseEvent, SseRecord } from "../../src/body/sse-decoder.js";
import { decodeSse, eventsOf, oneByteAtATime, splitAt } from "./sse-harness.js";

interface ModelEvent {
  comment?: string;
  event?: string;
  id?: string;
  retry?: number;
  dataLines: string[];
}

const tricky = ["é", "😀", "中", " ", ":", "{", '"', "\u2028", "\uFEFF", "\u0000"];
const lineChar = fc.oneof(
  fc.constantFrom(...tricky),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }),
  fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }),
);
const lineText = fc
  .array(lineChar, { maxLength: 12 })
  .map((chars) => chars.join(""))
  .filter((text) => !/[\r\n]/.test(text));

const modelEvent: fc.Arbitrary<ModelEvent> = fc.record(
  {
    comment: lineText,
    event: lineText.filter((name) => name !== ""),
    id: lineText.filter((id) => !id.includes("\u0000")),
    retry: fc.nat(),
    dataLines: fc.array(lineText, { minLength: 1, maxLength: 4 }),
  },
  { requiredKeys: ["dataLines"] },
);

const stream = fc.record({
  events: fc.array(modelEvent, { maxLength: 8 }),
  lineEnd: fc.constantFrom("\n", "\r", "\r\n"),
  bom: fc.boolean(),
});

/** Serialises events as a server would, and the events a client must see, with their byte offsets. */
function serialise({ events, lineEnd, bom }: { events: ModelEvent[]; lineEnd: string; bom: boolean }) {
  let text = bom ? "\uFEFF" : "";
  const expected: SseEvent[] = [];
  for (const model of events) {
    // The first block starts at byte 0, a leading BOM included.
    const byteOffset = expected.length === 0 ? 0 : Buffer.byteLength(text);
    const lines: string[] = [];
    if (model.comment !== undefined) lines.push(`: ${model.comment}`);
    if (model.event !== undefined) lines.push(`event: ${model.event}`);
    if (model.id !== undefined) lines.push(`id: ${model.id}`);
    if (model.retry !== undefined) lines.push(`retry: ${model.retry}`);
    for (const data of model.dataLines) lines.push(`data: ${data}`);
    text += lines.map((line) => line + lineEnd).join("") + lineEnd;
    const event: SseEvent = { data: model.dataLines.join("\n") };
    if (model.event !== undefined) event.event = model.event;
    if (model.id !== undefined) event.id = model.id;
    if (model.retry !== undefined) event.retry = model.retry;
    event.byteOffset = byteOffset;
    expected.push(event);
  }
  return { bytes: Buffer.from(text, "utf8"), expected };
}

const cuts = fc.array(fc.nat(), { maxLength: 12 });

describe("SSE decoder properties", () => {
  it("decodes any well-formed stream to exactly the events that were sent", () => {
    fc.assert(
      fc.property(stream, (input) => {
        const { bytes, expected } = serialise(input);
        expect(eventsOf(decodeSse([bytes]))).toEqual(expected);
      }),
      { numRuns: 400 },
    );
  });

  it("gives the same records whatever the chunk boundaries", () => {
    fc.assert(
      fc.property(stream, cuts, (input, cutPoints) => {
        const { bytes } = serialise(input);
        const options = { includeComments: true };
        expect(decodeSse(splitAt(bytes, cutPoints), options)).toEqual(decodeSse([bytes], options));
      }),
      { numRuns: 400 },
    );
  });

  it("gives the same records when fed one byte at a time", () => {
    fc.assert(
      fc.property(stream, (input) => {
        const { bytes, expected } = serialise(input);
        expect(eventsOf(decodeSse(oneByteAtATime(bytes)))).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it("handles every two-way split of multi-byte characters and CRLF", () => {
    const bytes = Buffer.from("event: é\r\ndata: 😀中\r\ndata: x\r\n\r\nid: 中\r\ndata: é\r\n\r\n");
    const whole = decodeSse([bytes]);
    expect(eventsOf(whole).map((event) => event.data)).toEqual(["😀中\nx", "é"]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(decodeSse(splitAt(bytes, [cut]))).toEqual(whole);
    }
  });

  const soupPiece = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom("data: ", "data:", "event: ", "id: ", "retry: 10", ": ", "\n", "\r", "\r\n", "x"),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom("data: x\n", "data: é😀中\r\n", "id: 7\r", "\n\n", "\r\n\r\n", "\r\r"),
    },
    { weight: 1, arbitrary: fc.constantFrom("é", "😀", "中", "\uFEFF") },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 24 }).map((bytes) => Buffer.from(bytes).toString("latin1")) },
  );
  const soup = fc
    .array(fc.tuple(soupPiece, fc.boolean()), { maxLength: 40 })
    .map((pieces) =>
      Buffer.concat(pieces.map(([piece, raw]) => Buffer.from(piece, raw ? "latin1" : "utf8"))),
    );

  it("never throws on arbitrary bytes, and chunking never changes events, drops or incomplete reports", () => {
    fc.assert(
      fc.property(soup, cuts, fc.integer({ min: 4, max: 160 }), (bytes, cutPoints, maxEventBytes) => {
        const options = { maxEventBytes };
        const whole = comparable(decodeSse([bytes], options));
        expect(comparable(decodeSse(splitAt(bytes, cutPoints), options))).toEqual(whole);
      }),
      { numRuns: 600 },
    );
  });

  it("dispatches the same events as eventsource-parser given the whole text at once", () => {
    fc.assert(
      fc.property(soup, (bytes) => {
        const reference: EventSourceMessage[] = [];
        const parser = createParser({ onEvent: (event) => reference.push(event) });
        parser.feed(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes));
        const ours = eventsOf(decodeSse([bytes], { maxEventBytes: Infinity }));
        expect(ours.map(({ event, id, data }) => ({ event, id, data }))).toEqual(
          reference.map(({ event, id, data }) => ({ event, id, data })),
        );
      }),
      { numRuns: 600 },
    );
  });
});

/**
 * Invalid-line reports from a block that is later dropped for its size depend on whether its first
 * lines arrived before the drop; the size report's wording includes the size seen so far.
 */
function comparable(records: SseRecord[]) {
  return records.flatMap((record): unknown[] => {
    if (record.type !== "problem") return [record];
    if (record.code === "sse_invalid_field") return [];
    return [{ type: record.type, code: record.code, byteOffset: record.byteOffset }];
  });
}
