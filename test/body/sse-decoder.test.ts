import { describe, expect, it } from "vitest";
import { decodeSse, decodeSseText, eventsOf, oneByteAtATime, splitAt } from "./sse-harness.js";

const initializeResult = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  result: { protocolVersion: "2025-06-18", serverInfo: { name: "résumé-server 中文 😀", version: "1.0.0" } },
});

describe("SSE decoder: streams as MCP servers send them", () => {
  it("decodes a TypeScript-SDK stream (event: message, id, one JSON data line)", () => {
    const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}';
    const second = `event: message\nid: s1_2\ndata: ${initializeResult}\n\n`;
    const stream = `event: message\nid: s1_1\ndata: ${progress}\n\n${second}`;
    const records = decodeSseText(stream);
    expect(records).toEqual([
      { type: "event", event: { event: "message", id: "s1_1", data: progress, byteOffset: 0 } },
      {
        type: "event",
        event: { event: "message", id: "s1_2", data: initializeResult, byteOffset: stream.indexOf(second) },
      },
    ]);
    expect(JSON.parse(eventsOf(records)[1]!.data)).toMatchObject({ id: 1 });
  });

  it("decodes a Python-style stream: CRLF line ends and `: ping` comments between events", () => {
    const stream =
      ": ping - 2025-06-18 10:00:00+00:00\r\n\r\n" +
      `event: message\r\ndata: ${initializeResult}\r\n\r\n` +
      ": ping - 2025-06-18 10:00:15+00:00\r\n\r\n";
    const withoutComments = decodeSseText(stream);
    expect(withoutComments).toEqual([
      { type: "event", event: { event: "message", data: initializeResult, byteOffset: stream.indexOf("event:") } },
    ]);
    const withComments = decodeSseText(stream, { includeComments: true });
    expect(withComments.map((record) => record.type)).toEqual(["comment", "event", "comment"]);
    expect(withComments[0]).toEqual({ type: "comment", comment: "ping - 2025-06-18 10:00:00+00:00" });
  });

  it("gives the body byte offset of each event (multi-byte characters count as bytes)", () => {
    const first = "data: é😀中\n\n";
    const records = decodeSseText(first + "data: second\n\n");
    expect(eventsOf(records).map((event) => event.byteOffset)).toEqual([0, Buffer.byteLength(first)]);
  });

  it("reports a priming event (id and empty data) as an event with empty data, with its retry", () => {
    const stream = "id: prime-0\nretry: 3000\ndata: \n\nid: 42\ndata: {}\n\n";
    expect(eventsOf(decodeSseText(stream))).toEqual([
      { id: "prime-0", retry: 3000, data: "", byteOffset: 0 },
      { id: "42", data: "{}", byteOffset: stream.indexOf("id: 42") },
    ]);
  });

  it("reports a block with only id/retry fields (no data) as meta, not as an event", () => {
    const records = decodeSseText("retry: 1000\n\nid: 5\n\n");
    expect(records).toEqual([
      { type: "meta", retry: 1000, byteOffset: 0 },
      { type: "meta", id: "5", byteOffset: 13 },
    ]);
  });

  it("joins multi-line data with LF and leaves the event name unset when there is no event: field", () => {
    const records = decodeSseText('data: {"jsonrpc":"2.0",\ndata:  "id": 3,\ndata:"result":{}}\n\n');
    expect(eventsOf(records)).toEqual([{ data: '{"jsonrpc":"2.0",\n "id": 3,\n"result":{}}', byteOffset: 0 }]);
    expect(JSON.parse(eventsOf(records)[0]!.data)).toEqual({ jsonrpc: "2.0", id: 3, result: {} });
  });

  it("decodes CR-only line ends", () => {
    const stream = "event: message\rid: 1\rdata: a\rdata: b\r\rdata: c\r\r";
    expect(eventsOf(decodeSseText(stream))).toEqual([
      { event: "message", id: "1", data: "a\nb", byteOffset: 0 },
      { data: "c", byteOffset: stream.indexOf("data: c") },
    ]);
  });

  it("treats CRLF split across two chunks as one line end, not as a blank line", () => {
    const bytes = Buffer.from("data: a\r\ndata: b\r\n\r\n");
    const cutInsideFirstCrlf = bytes.indexOf("\r\n") + 1;
    const records = decodeSse(splitAt(bytes, [cutInsideFirstCrlf]));
    expect(eventsOf(records)).toEqual([{ data: "a\nb", byteOffset: 0 }]);
  });

  it("reports every retry value in its event and ignores an invalid one with a problem", () => {
    const records = decodeSseText("retry: soon\ndata: x\n\n");
    expect(records).toEqual([
      { type: "problem", code: "sse_invalid_field", message: expect.stringContaining("retry"), byteOffset: 0 },
      { type: "event", event: { data: "x", byteOffset: 0 } },
    ]);
  });

  it("strips a UTF-8 BOM at the start of the stream, even when split across chunks", () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("data: hi\n\n")]);
    for (const chunks of [[bytes], oneByteAtATime(bytes), splitAt(bytes, [1]), splitAt(bytes, [2])]) {
      expect(eventsOf(decodeSse(chunks))).toEqual([{ data: "hi", byteOffset: 0 }]);
    }
  });

  it("treats a BOM followed by a blank line as an empty first block", () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("\ndata: hi\n\n")]);
    expect(eventsOf(decodeSse([bytes]))).toEqual([{ data: "hi", byteOffset: 4 }]);
  });

  it("keeps a BOM that is not at the stream start as data", () => {
    expect(eventsOf(decodeSseText("data: a\n\n\uFEFFdata: b\n\n")).map((event) => event.data)).toEqual(["a"]);
  });

  it("decodes characters split across chunks and turns invalid UTF-8 into U+FFFD", () => {
    const bytes = Buffer.from("data: 😀\n\n");
    expect(eventsOf(decodeSse(oneByteAtATime(bytes)))[0]!.data).toBe("😀");
    const invalid = Buffer.concat([Buffer.from("data: a"), Buffer.from([0xff, 0xc3]), Buffer.from("\n\n")]);
    expect(eventsOf(decodeSse([invalid]))[0]!.data).toBe("a\uFFFD\uFFFD");
  });

  it("reports a final event without a blank line as incomplete, with what it would have been", () => {
    const stream = "data: done\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\"";
    const records = decodeSseText(stream);
    expect(records).toEqual([
      { type: "event", event: { data: "done", byteOffset: 0 } },
      {
        type: "incomplete",
        byteOffset: 12,
        bytes: stream.length - 12,
        event: { event: "message", data: '{"jsonrpc":"2.0"', byteOffset: 12 },
      },
    ]);
  });

  it("reports an incomplete event ending in a line end (LF, CR or CRLF) the same way", () => {
    for (const end of ["\n", "\r", "\r\n"]) {
      const records = decodeSseText(`data: partial${end}`);
      expect(records).toEqual([
        { type: "incomplete", byteOffset: 0, bytes: 13 + end.length, event: { data: "partial", byteOffset: 0 } },
      ]);
    }
  });

  it("reads a long final block without a blank line for its whole retry, id and event lines only, as a client would", () => {
    const data = "x".repeat(100 * 1024);
    const stream = `data: done\n\nretry: 3000\nretry: soon\nevent: update\nid: 7\ndata: ${data}\nretry: 1500\r\nid: a\0b\nretry: 99`;
    expect(decodeSseText(stream)).toEqual([
      { type: "event", event: { data: "done", byteOffset: 0 } },
      { type: "incomplete", byteOffset: 12, bytes: stream.length - 12, uninspected: { event: "update", id: "7", retry: 99 } },
    ]);
    // In chunks, and with no field a client acts on.
    const plain = `data: ${data}`;
    expect(decodeSse(splitAt(Buffer.from(plain), [3, 70_000]))).toEqual([{ type: "incomplete", byteOffset: 0, bytes: plain.length, uninspected: {} }]);
    // A line end split across chunks (CR | LF) is one line end; a field line across a chunk boundary is read whole.
    const split = Buffer.from(`data: ${data}\r\nre${"try: 42\r\nid: 9"}`);
    const at = split.indexOf("\r\nre") + 1;
    expect(decodeSse(splitAt(split, [100, at, at + 3]))).toEqual([{ type: "incomplete", byteOffset: 0, bytes: split.length, uninspected: { id: "9", retry: 42 } }]);
  });

  it("reads the same retry from a long final block as from a short one (a differential check)", () => {
    for (const tail of ["retry: 25\nid: 3\ndata: y\nevent: e\n", "retry: 250\n", "retry:250\r", "retry 250\n", "retry: 25x\n", "retry: 250", "event\nretry: 7\r\n", "id\n: c\nretry: 8\n"]) {
      const short = decodeSseText(`${tail}data: y`).find((r) => r.type === "incomplete");
      const long = decodeSseText(`${tail}data: ${"y".repeat(70_000)}`).find((r) => r.type === "incomplete");
      const shortRetry = short?.type === "incomplete" ? short.event?.retry : undefined;
      const longRetry = long?.type === "incomplete" ? long.uninspected?.retry : undefined;
      expect(longRetry, tail).toBe(shortRetry);
    }
  });

  it("reads a long first block after the stream's byte order mark as a client does (the mark is not part of its first line)", () => {
    for (const tail of ["\ufeffretry: 25\nid: 3\n", "\ufeffevent: e\r\n", "\ufeffid: 4\rdata: a\n"]) {
      const short = decodeSseText(`${tail}data: y`).find((r) => r.type === "incomplete");
      const long = decodeSseText(`${tail}data: ${"y".repeat(70_000)}`).find((r) => r.type === "incomplete");
      const shortFields = short?.type === "incomplete" ? { event: short.event?.event, retry: short.event?.retry, id: short.event?.id } : undefined;
      const longFields = long?.type === "incomplete" ? { event: long.uninspected?.event, retry: long.uninspected?.retry, id: long.uninspected?.id } : undefined;
      expect(longFields, JSON.stringify(tail)).toEqual(shortFields);
    }
  });

  it("does not report a stream that ends cleanly, or after a comment, as incomplete", () => {
    expect(decodeSseText("data: a\n\n").map((record) => record.type)).toEqual(["event"]);
    expect(decodeSseText("data: a\r\n\r\n: ping\r\n").map((record) => record.type)).toEqual(["event"]);
    expect(decodeSseText("")).toEqual([]);
  });

  it("limits per-line problem reports and summarises the rest at the end", () => {
    const garbage = Array.from({ length: 10 }, (_, i) => `garbage line ${i}\n`).join("");
    const problems = decodeSseText(garbage + "data: ok\n\n").filter((record) => record.type === "problem");
    expect(problems).toHaveLength(4);
    expect(problems[3]).toMatchObject({ message: expect.stringContaining("7 more invalid SSE lines") });
  });
});
