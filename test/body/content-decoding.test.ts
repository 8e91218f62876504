import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import {
  createContentDecoder,
  parseContentEncoding,
  zstdSupported,
  type ContentDecoder,
} from "../../src/body/content-decoding.js";
import type { BodyProblem } from "../../src/body/problem.js";
import { gzipOfZeros } from "./gzip-bomb.js";
import { skipNote } from "../helpers/skip-note.js";

const MiB = 1024 * 1024;

interface Run {
  output: Buffer;
  chunks: number;
  problems: BodyProblem[];
  ends: number;
  decoder: ContentDecoder;
}

function startDecoder(
  encoding: string | string[] | undefined,
  maxBytes = 64 * MiB,
  keepOutput = true,
  maxRatio?: { ratio: number; afterBytes: number },
) {
  const kept: Buffer[] = [];
  const run = { output: Buffer.alloc(0), chunks: 0, bytes: 0, problems: [] as BodyProblem[], ends: 0 };
  const created = createContentDecoder(encoding, {
    maxBytes,
    ...(maxRatio ? { maxRatio } : {}),
    onData: (chunk) => {
      run.chunks++;
      run.bytes += chunk.length;
      if (keepOutput) kept.push(chunk);
    },
    onProblem: (problem) => run.problems.push(problem),
    onEnd: () => {
      run.ends++;
      run.output = Buffer.concat(kept);
    },
  });
  if (!created.ok) throw new Error(created.problem.message);
  return { run, decoder: created.decoder };
}

async function decodeAll(encoding: string | string[] | undefined, chunks: Buffer[], maxBytes?: number): Promise<Run> {
  const { run, decoder } = startDecoder(encoding, maxBytes);
  for (const chunk of chunks) decoder.data(chunk);
  decoder.end();
  await decoder.done;
  return { ...run, decoder };
}

function chunksOf(bytes: Buffer, size: number): Buffer[] {
  return Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
}

const body = Buffer.from(
  Array.from({ length: 2000 }, (_, i) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: i,
      result: { content: [{ type: "text", text: `résultat ${i} 中文 😀` }] },
    }),
  ).join("\n"),
);

const brotli = (input: Buffer) =>
  zlib.brotliCompressSync(input, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });

const codings: Array<[string, (input: Buffer) => Buffer]> = [
  ["gzip", (input) => zlib.gzipSync(input)],
  ["x-gzip", (input) => zlib.gzipSync(input)],
  ["deflate", (input) => zlib.deflateSync(input)],
  ["deflate", (input) => zlib.deflateRawSync(input)],
  ["br", brotli],
];

skipNote(import.meta.url, !zstdSupported, "this Node's zlib has no zstd");
describe("content decoding", () => {
  it.each(codings)("round-trips %s (split into 1000-byte chunks)", async (encoding, encode) => {
    const run = await decodeAll(encoding, chunksOf(encode(body), 1000));
    expect(run.problems).toEqual([]);
    expect(run.output.equals(body)).toBe(true);
    expect(run.decoder.bytesOut).toBe(body.length);
    expect(run.ends).toBe(1);
  });

  it("round-trips raw deflate whose first chunk is a single byte (header sniffing waits for two)", async () => {
    const compressed = zlib.deflateRawSync(body);
    const run = await decodeAll("deflate", [compressed.subarray(0, 1), compressed.subarray(1)]);
    expect(run.output.equals(body)).toBe(true);
  });

  it.skipIf(!zstdSupported)("round-trips zstd (node:zlib has zstd here)", async () => {
    const run = await decodeAll("zstd", chunksOf(zlib.zstdCompressSync(body), 777));
    expect(run.problems).toEqual([]);
    expect(run.output.equals(body)).toBe(true);
  });

  it("undoes a list of codings last-applied first, ignoring case, spaces and identity", async () => {
    const twice = brotli(zlib.gzipSync(body));
    expect(parseContentEncoding(" GZIP , identity,br ")).toEqual({ ok: true, codings: ["br", "gzip"] });
    const run = await decodeAll(" GZIP , identity,br ", chunksOf(twice, 4096));
    expect(run.output.equals(body)).toBe(true);
    const asHeaderList = await decodeAll(["gzip", "br"], [twice]);
    expect(asHeaderList.output.equals(body)).toBe(true);
  });

  it("passes identity (or no header) through synchronously, unchanged", () => {
    for (const encoding of [undefined, "", "identity", "Identity"]) {
      const { run, decoder } = startDecoder(encoding);
      decoder.data(Buffer.from("abc"));
      decoder.data(Buffer.from("déf"));
      decoder.end();
      expect(decoder.codings).toEqual([]);
      expect(run.ends).toBe(1);
      expect(run.output.toString()).toBe("abcdéf");
    }
  });

  it("refuses unknown codings with the name in the message", () => {
    for (const [header, name] of [
      ["compress", "compress"],
      ["gzip, snappy", "snappy"],
      ["x-unknown", "x-unknown"],
    ]) {
      const created = createContentDecoder(header, { maxBytes: 1, onData() {}, onProblem() {} });
      expect(created).toEqual({
        ok: false,
        problem: { code: "unsupported_encoding", message: `unsupported content-encoding ${name}` },
      });
    }
  });

  it("decodes an empty compressed body (e.g. a 204 with Content-Encoding) to nothing, without error", async () => {
    for (const encoding of ["gzip", "deflate", "br"]) {
      const run = await decodeAll(encoding, []);
      expect(run.problems).toEqual([]);
      expect(run.output.length).toBe(0);
      expect(run.ends).toBe(1);
    }
  });

  it("reports corrupt data as decode_error, once, without throwing", async () => {
    const corrupt = Buffer.from(zlib.gzipSync(body));
    corrupt.fill(0x55, 100, 200);
    for (const [encoding, bytes] of [
      ["gzip", corrupt],
      ["gzip", Buffer.from("this is not gzip at all")],
      ["br", Buffer.from([0xff, 0xff, 0xff, 0xff, 0x00, 0x01])],
      ["deflate", Buffer.from("definitely not deflate")],
    ] as const) {
      const run = await decodeAll(encoding, chunksOf(bytes, 64));
      expect(run.problems).toEqual([
        { code: "decode_error", message: expect.stringMatching(`^${encoding} decoding failed: `) },
      ]);
      expect(run.ends).toBe(1);
    }
  });

  it("reports a truncated stream after emitting what could be decoded", async () => {
    const compressed = zlib.gzipSync(body);
    const run = await decodeAll("gzip", [compressed.subarray(0, compressed.length - 20)]);
    expect(run.problems).toEqual([{ code: "decode_error", message: "gzip decoding failed: unexpected end of file" }]);
    expect(run.output.length).toBeGreaterThan(0);
    expect(body.subarray(0, run.output.length).equals(run.output)).toBe(true);
  });

  it("stops a 200 MB gzip bomb at the limit, with bounded memory", async () => {
    const bomb = gzipOfZeros(200);
    const before = process.memoryUsage();
    const { run, decoder } = startDecoder("gzip", MiB, false);
    for (const chunk of chunksOf(bomb, 16 * 1024)) decoder.data(chunk);
    decoder.end();
    await decoder.done;
    const after = process.memoryUsage();
    expect(run.problems).toEqual([
      { code: "decode_limit", message: expect.stringMatching(/^decoded body exceeds 1048576 bytes \(from \d+ compressed bytes\); decoding stopped$/) },
    ]);
    expect(run.bytes).toBe(MiB);
    expect(run.ends).toBe(1);
    const growth = after.arrayBuffers + after.heapUsed - (before.arrayBuffers + before.heapUsed);
    expect(growth).toBeLessThan(64 * MiB);
    const chunksAtEnd = run.chunks;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(run.chunks).toBe(chunksAtEnd);
  });

  it("stops a bomb once it has expanded past the ratio limit, long before the byte cap", async () => {
    const bomb = gzipOfZeros(200); // ~1000:1
    const { run, decoder } = startDecoder("gzip", 1024 * MiB, false, { ratio: 500, afterBytes: 8 * MiB });
    decoder.data(bomb);
    decoder.end();
    await decoder.done;
    expect(run.problems).toEqual([
      {
        code: "decode_limit",
        message: expect.stringMatching(/^decoded body is over 500 times its compressed size past 8388608 bytes \(\d+ compressed bytes decoded\); decoding stopped$/),
      },
    ]);
    // Stopped at the first output chunk past 8 MiB (zlib writes up to 64 KiB at a time).
    expect(run.bytes).toBeGreaterThan(8 * MiB);
    expect(run.bytes).toBeLessThanOrEqual(8 * MiB + 64 * 1024);
    expect(run.ends).toBe(1);
  });

  it("lets an ordinary compressed body through the ratio limit whole", async () => {
    const text = Buffer.from(
      Array.from({ length: 200_000 }, (_, i) => `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":${i}}}\n\n`).join(""),
    );
    const run = await decodeAll("gzip", [zlib.gzipSync(text)]);
    const { run: limited, decoder } = startDecoder("gzip", 1024 * MiB, true, { ratio: 1000, afterBytes: MiB });
    decoder.data(zlib.gzipSync(text));
    decoder.end();
    await decoder.done;
    expect(text.length).toBeGreaterThan(10 * MiB);
    expect(limited.problems).toEqual([]);
    expect(limited.output.equals(text)).toBe(true);
    expect(run.output.equals(text)).toBe(true);
  });

  it("caps an inner coding's output too (a bomb wrapped in another coding)", async () => {
    const wrapped = brotli(gzipOfZeros(64));
    const run = await decodeAll("gzip, br", [wrapped], MiB);
    expect(run.problems).toEqual([{ code: "decode_limit", message: expect.any(String) }]);
    expect(run.output.length).toBeLessThanOrEqual(MiB);
  });

  it("stops at once on abort and still ends exactly once", async () => {
    const { run, decoder } = startDecoder("gzip");
    decoder.data(zlib.gzipSync(body));
    decoder.abort();
    decoder.end();
    decoder.data(Buffer.from("late"));
    await decoder.done;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(run.chunks).toBe(0);
    expect(run.ends).toBe(1);
    expect(run.problems).toEqual([]);
  });

  it("reports a throwing consumer as decoder_failed instead of crashing inside a zlib callback", async () => {
    const problems: BodyProblem[] = [];
    const created = createContentDecoder("gzip", {
      maxBytes: MiB,
      onData: () => {
        throw new Error("consumer bug");
      },
      onProblem: (problem) => problems.push(problem),
    });
    if (!created.ok) throw new Error("expected a decoder");
    created.decoder.data(zlib.gzipSync(Buffer.from("hello")));
    created.decoder.end();
    await created.decoder.done;
    expect(problems).toEqual([{ code: "decoder_failed", message: "body consumer threw: consumer bug" }]);
  });
});
