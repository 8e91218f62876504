import zlib from "node:zlib";
import { describe, expect, it, vi } from "vitest";
import {
  bodyModeFor,
  createBodyDecoder,
  mediaTypeOf,
  type BodyDecoderOptions,
  type BodyMessage,
  type BodyProblem,
} from "../../src/body/index.js";
import { gzipOfZeros } from "./gzip-bomb.js";

interface Outcome {
  mode: string;
  messages: BodyMessage[];
  problems: BodyProblem[];
}

async function decodeBody(
  headers: { contentType?: string; contentEncoding?: string },
  chunks: Buffer[],
  overrides: Partial<BodyDecoderOptions> = {},
  finish: "end" | "abort" = "end",
): Promise<Outcome> {
  const messages: BodyMessage[] = [];
  const problems: BodyProblem[] = [];
  const tap = createBodyDecoder({
    contentType: headers.contentType,
    contentEncoding: headers.contentEncoding,
    maxInspectBytes: 64 * 1024,
    maxEventBytes: 16 * 1024,
    onMessage: (message) => messages.push(message),
    onProblem: (problem) => problems.push(problem),
    ...overrides,
  });
  for (const chunk of chunks) tap.data(chunk);
  if (finish === "end") tap.end();
  else tap.abort?.({ code: "upstream_reset", message: "socket hang up" });
  await tap.done;
  return { mode: tap.mode, messages, problems };
}

const response = { jsonrpc: "2.0", id: 3, result: { tools: [{ name: "echo", description: "Écho 😀" }] } };
const responseBytes = Buffer.from(JSON.stringify(response));

describe("media type routing", () => {
  it("matches case-insensitively and ignores parameters", () => {
    expect(mediaTypeOf("Application/JSON; charset=utf-8")).toBe("application/json");
    expect(mediaTypeOf(["text/event-stream;charset=UTF-8"])).toBe("text/event-stream");
    expect(mediaTypeOf("nonsense")).toBeUndefined();
    expect(mediaTypeOf(undefined)).toBeUndefined();
    expect(bodyModeFor("application/json; charset=utf-8")).toBe("json");
    expect(bodyModeFor("application/problem+json")).toBe("json");
    expect(bodyModeFor("TEXT/EVENT-STREAM")).toBe("sse");
    expect(bodyModeFor("text/html")).toBe("ignored");
    expect(bodyModeFor("application/jsonl")).toBe("ignored");
  });
});

describe("createBodyDecoder", () => {
  it("decodes a gzipped JSON body into one json message", async () => {
    const outcome = await decodeBody(
      { contentType: "application/json; charset=utf-8", contentEncoding: "gzip" },
      [zlib.gzipSync(responseBytes)],
    );
    expect(outcome).toEqual({
      mode: "json",
      messages: [{ kind: "json", value: response, bytes: responseBytes.length }],
      problems: [],
    });
  });

  it("decodes a JSON body that arrives in many small chunks", async () => {
    const chunks = Array.from({ length: responseBytes.length }, (_, i) => responseBytes.subarray(i, i + 1));
    const outcome = await decodeBody({ contentType: "APPLICATION/JSON" }, chunks);
    expect(outcome.messages).toEqual([{ kind: "json", value: response, bytes: responseBytes.length }]);
  });

  it("decodes a compressed event stream into sse messages", async () => {
    const stream = `id: 0\ndata: \n\nevent: message\nid: 1\ndata: ${JSON.stringify(response)}\n\n: keep-alive\n\n`;
    const compressed = zlib.brotliCompressSync(Buffer.from(stream));
    const outcome = await decodeBody(
      { contentType: "text/event-stream", contentEncoding: "br" },
      [compressed.subarray(0, 10), compressed.subarray(10)],
      { includeComments: true },
    );
    expect(outcome.mode).toBe("sse");
    expect(outcome.problems).toEqual([]);
    expect(outcome.messages).toEqual([
      { kind: "sse", event: { id: "0", data: "", byteOffset: 0 } },
      {
        kind: "sse",
        event: { event: "message", id: "1", data: JSON.stringify(response), byteOffset: stream.indexOf("event:") },
      },
      { kind: "sse_comment", comment: "keep-alive" },
    ]);
  });

  it("decodes each event of a gzipped stream as it arrives, not at the end of the body", async () => {
    const gzip = zlib.createGzip();
    const compressed: Buffer[] = [];
    gzip.on("data", (chunk: Buffer) => compressed.push(chunk));
    const flushed = () => new Promise<void>((resolve) => gzip.flush(() => resolve()));
    const messages: BodyMessage[] = [];
    const tap = createBodyDecoder({
      contentType: "text/event-stream",
      contentEncoding: "gzip",
      maxInspectBytes: 1024,
      maxEventBytes: 1024,
      onMessage: (message) => messages.push(message),
      onProblem: (problem) => expect.fail(problem.message),
    });
    gzip.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n');
    await flushed();
    for (const chunk of compressed.splice(0)) tap.data(chunk);
    await vi.waitFor(() => expect(messages).toHaveLength(1));
    gzip.end("data: {}\n\n");
    await new Promise((resolve) => gzip.on("end", resolve));
    for (const chunk of compressed) tap.data(chunk);
    tap.end();
    await tap.done;
    expect(messages.map((message) => message.kind === "sse" && message.event.data)).toEqual([
      '{"jsonrpc":"2.0","method":"notifications/progress"}',
      "{}",
    ]);
  });

  it("hands on id/retry-only SSE blocks as sse_meta", async () => {
    const outcome = await decodeBody({ contentType: "text/event-stream" }, [Buffer.from("id: 7\nretry: 500\n\n")]);
    expect(outcome.messages).toEqual([{ kind: "sse_meta", id: "7", retry: 500, byteOffset: 0 }]);
  });

  it("ignores other media types and bodies without a type", async () => {
    for (const contentType of ["text/html", "application/octet-stream", undefined]) {
      const outcome = await decodeBody({ contentType }, [Buffer.from("<html>{}</html>")]);
      expect(outcome).toEqual({ mode: "ignored", messages: [], problems: [] });
    }
  });

  it("reads a body under a coding it does not know as sent, and says why a receiver may read it otherwise", async () => {
    const outcome = await decodeBody({ contentType: "application/json", contentEncoding: "compress" }, [responseBytes]);
    expect(outcome).toEqual({
      mode: "json",
      messages: [{ kind: "json", value: response, bytes: responseBytes.length, ambiguity: 'content-encoding "compress" is not one the proxy can decode; read as sent' }],
      problems: [],
    });
  });

  it("reads plain JSON labelled gzip as sent (as lenient peers do), with the reason", async () => {
    const outcome = await decodeBody({ contentType: "application/json", contentEncoding: "gzip" }, [responseBytes]);
    expect(outcome.messages).toEqual([
      { kind: "json", value: response, bytes: responseBytes.length, ambiguity: expect.stringMatching(/^content-encoding "gzip" does not decode \(gzip decoding failed: .*\); read as sent$/) },
    ]);
    expect(outcome.problems).toEqual([]);
  });

  it("reports invalid JSON and corrupt compression as problems, never throwing", async () => {
    const invalid = await decodeBody({ contentType: "application/json" }, [Buffer.from('{"jsonrpc": "2.0",')]);
    expect(invalid.problems).toEqual([{ code: "invalid_json", message: expect.stringContaining("invalid JSON"), bytes: 18 }]);
    const gzipped = zlib.gzipSync(responseBytes);
    const corrupt = await decodeBody({ contentType: "application/json", contentEncoding: "gzip" }, [gzipped.subarray(0, 20)]);
    expect(corrupt.problems).toEqual([
      { code: "decode_error", message: expect.stringContaining("gzip decoding failed"), ambiguity: expect.stringContaining("does not decode"), bytes: 20 },
    ]);
    expect(corrupt.messages).toEqual([]);
  });

  it("reports a JSON body over the inspection limit as truncated, compressed or not", async () => {
    const big = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { blob: "z".repeat(100_000) } }));
    for (const [contentEncoding, body] of [
      [undefined, big],
      ["gzip", zlib.gzipSync(big)],
    ] as const) {
      const outcome = await decodeBody({ contentType: "application/json", contentEncoding }, [body]);
      // Compressed, the reason also says how far it expanded (the decoder's words).
      const message = contentEncoding
        ? /^JSON body is larger than the inspection limit of 65536 bytes; not parsed \(decoded body exceeds 65536 bytes \(from \d+ compressed bytes\); decoding stopped\)$/
        : /^JSON body is larger than the inspection limit of 65536 bytes; not parsed$/;
      // Decoded past the limit, the body could not be read at all: a reason to refuse it in enforce mode.
      const ambiguity = contentEncoding ? { ambiguity: "the decoded body is larger than the inspection limit of 65536 bytes" } : {};
      expect(outcome.problems).toEqual([{ code: "body_truncated", message: expect.stringMatching(message), ...ambiguity }]);
      expect(outcome.messages).toEqual([]);
    }
  });

  it("stops a gzip bomb declared as JSON at the inspection limit, and the reason shows the expansion", async () => {
    const bomb = gzipOfZeros(50);
    const outcome = await decodeBody({ contentType: "application/json", contentEncoding: "gzip" }, [bomb]);
    expect(outcome.problems).toEqual([{ code: "body_truncated", message: expect.stringContaining("(decoded body exceeds 65536 bytes (from "), ambiguity: expect.any(String) }]);
    const compressed = Number(/from (\d+) compressed bytes/.exec(outcome.problems[0]!.message)?.[1]);
    expect(compressed).toBeGreaterThan(0);
    expect(compressed).toBeLessThanOrEqual(bomb.length);
  });

  it("caps the decoded size of a compressed event stream with maxStreamBytes", async () => {
    const events = Buffer.from("data: {}\n\n".repeat(10_000));
    const outcome = await decodeBody(
      { contentType: "text/event-stream", contentEncoding: "gzip" },
      [zlib.gzipSync(events)],
      { maxStreamBytes: 1000 },
    );
    expect(outcome.messages).toHaveLength(100);
    expect(outcome.problems).toEqual([{ code: "decode_limit", message: expect.stringContaining("1000 bytes") }]);
  });

  it("refuses to hand on JSON nested deeper than maxJsonDepth", async () => {
    const deep = Buffer.from("[".repeat(50_000) + "]".repeat(50_000));
    const outcome = await decodeBody({ contentType: "application/json" }, [deep], { maxInspectBytes: 200_000 });
    expect(outcome.messages).toEqual([]);
    expect(outcome.problems).toEqual([{ code: "json_too_deep", message: "JSON body nests deeper than 256 levels", bytes: deep.length }]);
  });

  it("reports an event stream that ends mid-event, and one that breaks off", async () => {
    const cut = Buffer.from('data: {"jsonrpc":"2.0","id":1,"res');
    for (const finish of ["end", "abort"] as const) {
      const outcome = await decodeBody({ contentType: "text/event-stream" }, [cut], {}, finish);
      expect(outcome.problems).toEqual([
        { code: "sse_incomplete_event", message: expect.stringContaining("stream ended mid-event") },
      ]);
    }
  });

  it("does not parse a JSON body that broke off", async () => {
    const outcome = await decodeBody({ contentType: "application/json" }, [responseBytes.subarray(0, 20)], {}, "abort");
    expect(outcome).toEqual({ mode: "json", messages: [], problems: [] });
  });

  it("reports an oversized SSE event and carries on", async () => {
    const stream = `data: ${"x".repeat(20_000)}\n\ndata: after\n\n`;
    const outcome = await decodeBody({ contentType: "text/event-stream" }, [Buffer.from(stream)]);
    expect(outcome.problems).toEqual([{ code: "event_too_large", message: expect.stringContaining("16384 bytes") }]);
    expect(outcome.messages).toEqual([{ kind: "sse", event: { data: "after", byteOffset: 20_008 } }]);
  });

  it("turns a throwing onMessage into a decoder_failed problem instead of an exception", async () => {
    const problems: BodyProblem[] = [];
    const tap = createBodyDecoder({
      contentType: "text/event-stream",
      contentEncoding: undefined,
      maxInspectBytes: 1024,
      maxEventBytes: 1024,
      onMessage: () => {
        throw new Error("logger exploded");
      },
      onProblem: (problem) => problems.push(problem),
    });
    expect(() => tap.data(Buffer.from("data: 1\n\ndata: 2\n\n"))).not.toThrow();
    tap.end();
    await tap.done;
    expect(problems).toEqual([
      { code: "decoder_failed", message: "message consumer threw: logger exploded" },
      { code: "decoder_failed", message: "message consumer threw: logger exploded" },
    ]);
  });
});
