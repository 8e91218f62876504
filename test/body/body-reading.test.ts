import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { charsetsOf, readJsonBody, readStream, type JsonReading } from "../../src/body/index.js";

const message = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "delete_everything", arguments: {} } };
const text = JSON.stringify(message);

async function read(body: Buffer, contentType = "application/json", contentEncoding?: string): Promise<JsonReading> {
  return readJsonBody(body, { contentType, contentEncoding, maxBytes: 64 * 1024, maxJsonDepth: 64 });
}

describe("readJsonBody: every plausible reading", () => {
  it("an ordinary body has one reading and no doubt, with or without a UTF-8 byte order mark", async () => {
    expect(await read(Buffer.from(text))).toEqual({ ok: true, value: message, bytes: text.length, alternates: [], ambiguity: null });
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    expect(await read(bom, "application/json; charset=UTF-8")).toMatchObject({ ok: true, value: message, alternates: [], ambiguity: null });
    expect(await read(zlib.gzipSync(text), "application/json", "gzip")).toMatchObject({ ok: true, value: message, ambiguity: null });
  });

  it("lone surrogates escaped in JSON are one reading (every JSON parser reads the same escape)", async () => {
    const body = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"\\ud800"}}');
    expect(await read(body)).toMatchObject({ ok: true, alternates: [], ambiguity: null });
  });

  it("invalid UTF-8: the replaced reading first, the dropped one as an alternate", async () => {
    const body = Buffer.from(text.replace("everything", "every\u0000thing"));
    body[body.indexOf(0)] = 0xff;
    const reading = await read(body);
    expect(reading).toMatchObject({ ok: true, ambiguity: "the body is not valid UTF-8" });
    if (!reading.ok) throw new Error("unreachable");
    expect((reading.value as typeof message).params.name).toBe("delete_every\ufffdthing");
    expect(reading.alternates).toEqual([message]);
  });

  it("a coding that fails, or that the proxy does not know, is read as sent; so is a list it cannot undo", async () => {
    for (const coding of ["gzip", "br", "deflate", "gzip, br", "x-foo", "compress"]) {
      const reading = await read(Buffer.from(text), "application/json", coding);
      expect(reading, coding).toMatchObject({ ok: true, value: message, ambiguity: expect.stringContaining(`content-encoding "${coding}"`) });
    }
  });

  it("a truncated gzip stream: the bytes as sent and the decoded prefix are both readings", async () => {
    const gz = zlib.gzipSync(text);
    const cut = gz.subarray(0, gz.length - 8); // the trailer: some decoders (fetch's) accept the rest
    const reading = await read(cut, "application/json", "gzip");
    expect(reading).toMatchObject({ ok: true, value: message, ambiguity: expect.stringContaining('content-encoding "gzip" does not decode') });
  });

  it("a charset other than UTF-8 is a second reading when it reads differently", async () => {
    const utf16 = Buffer.from(text, "utf16le");
    expect(await read(utf16, "application/json; charset=utf-16le")).toMatchObject({
      ok: true,
      value: message,
      ambiguity: 'content-type names charset "utf-16le", which reads the body differently from UTF-8',
    });
    // ASCII reads the same in Latin-1: no doubt.
    expect(await read(Buffer.from(text), 'application/json; charset="ISO-8859-1"')).toMatchObject({ ok: true, ambiguity: null });
    expect(await read(Buffer.from(text), "application/json; charset=utf-7")).toMatchObject({
      ok: true,
      ambiguity: 'content-type names charset "utf-7", which the proxy cannot decode',
    });
  });

  it("UTF-16 and UTF-32 byte order marks announce another reading", async () => {
    const cases: [number[], BufferEncoding | "utf32le"][] = [
      [[0xff, 0xfe], "utf16le"],
      [[0xff, 0xfe, 0x00, 0x00], "utf32le"],
    ];
    for (const [bom, encoding] of cases) {
      const payload = encoding === "utf32le" ? Buffer.concat([...text].map((c) => Buffer.from([c.charCodeAt(0), 0, 0, 0]))) : Buffer.from(text, encoding);
      const reading = await read(Buffer.concat([Buffer.from(bom), payload]));
      expect(reading, encoding).toMatchObject({ ok: true, value: message, ambiguity: expect.stringContaining("byte order mark") });
    }
  });

  it("the charset parameter is parsed quoted or not; a second one is a reading too", async () => {
    expect(charsetsOf('application/json; charset="UTF-16LE"')).toEqual(["utf-16le"]);
    expect(charsetsOf("application/json;charset=utf-8")).toEqual(["utf-8"]);
    expect(charsetsOf("application/json")).toEqual([]);
    const twice = await read(Buffer.from(text, "utf16le"), "application/json; charset=utf-8; charset=utf-16le");
    expect(twice).toMatchObject({ ok: true, value: message, ambiguity: expect.stringContaining('charset "utf-16le"') });
  });
});

describe("readStream: an event stream's coding, undone as a lenient client does", () => {
  async function stream(chunks: Buffer[], contentEncoding: string): Promise<{ out: string; doubts: string[]; problems: string[] }> {
    const out: Buffer[] = [];
    const doubts: string[] = [];
    const problems: string[] = [];
    const r = readStream({
      contentEncoding,
      maxBytes: 1 << 20,
      retainBytes: 1 << 16,
      onData: (c) => out.push(c),
      onProblem: (p) => problems.push(p.code),
      onDoubt: (d) => doubts.push(d),
      onEnd: () => undefined,
    });
    for (const c of chunks) r.data(c);
    r.end();
    await r.done;
    return { out: Buffer.concat(out).toString(), doubts, problems };
  }
  const events = "event: message\ndata: {}\n\n".repeat(3);

  it("decodes a gzip stream, in any chunking", async () => {
    const gz = zlib.gzipSync(events);
    expect(await stream([gz.subarray(0, 5), gz.subarray(5)], "gzip")).toEqual({ out: events, doubts: [], problems: [] });
  });

  it("plain text labelled gzip, or an unknown coding, is read as sent, with the reason", async () => {
    const plain = Buffer.from(events);
    const labelled = await stream([plain.subarray(0, 7), plain.subarray(7)], "gzip");
    expect(labelled).toMatchObject({ out: events, problems: [] });
    expect(labelled.doubts).toEqual([expect.stringMatching(/^content-encoding "gzip" does not decode/)]);
    expect(await stream([plain], "x-foo")).toEqual({ out: events, doubts: ['content-encoding "x-foo" is not one the proxy can decode; read as sent'], problems: [] });
  });

  it("a stream that breaks after decoded bytes stops there", async () => {
    const gz = zlib.gzipSync(Buffer.from(events.repeat(5_000)), { level: 0 });
    const broken = Buffer.concat([gz.subarray(0, gz.length - 8), Buffer.from("garbage!")]);
    const result = await stream([broken], "gzip");
    expect(result.problems).toEqual(["decode_error"]);
    expect(result.doubts).toEqual([]);
  });
});

describe("charsetsOf without a charset parameter", () => {
  it("gives what the full parameter scan gives, for any content type", async () => {
    const { default: fc } = await import("fast-check");
    const full = (v: string | undefined): string[] => [...(v ?? "").matchAll(/;\s*charset\s*=\s*("?)([^";\s]*)\1/gi)].map((m) => m[2]!.toLowerCase());
    const part = fc.constantFrom("application/json", "; charset=utf-8", ";CHARSET=\"latin1\"", "; ſharset=x", "; chArSet = utf-16", "charset", "; charset=", ";", " ", "\"");
    const value = fc.oneof(fc.string(), fc.array(part).map((a) => a.join("")), fc.tuple(fc.string(), part, fc.string()).map((t) => t.join("")));
    fc.assert(fc.property(value, (v) => {
      expect(charsetsOf(v)).toEqual(full(v));
    }), { numRuns: 2000 });
    expect(charsetsOf(undefined)).toEqual([]);
    expect(charsetsOf(["text/plain; charset=latin1", "x"])).toEqual(["latin1"]);
  });
});
