/**
 * Hostile input, decoder by decoder: arbitrary bytes and arbitrary chunking, thousands of cases per
 * property. What is already fuzzed elsewhere is not repeated here:
 * - test/body/sse-properties.test.ts: SSE chunking invariance and agreement with eventsource-parser;
 * - test/mcp/jsonrpc.test.ts: classifyMessage agreeing with the schema guards on near-JSON-RPC values;
 * - test/mcp/chunking.property.test.ts: the addon's records independent of chunking for one valid stream.
 * This file adds: invariants of the SSE decoder on uniformly random bytes (sizes, offsets, byte counts), the
 * whole body decoder (content codings included) on arbitrary bytes, classifyMessage/splitBatch on any JS
 * value and any JSON text, the target and stateless-header parsers, the legacy endpoint table, the raw SSE
 * framer (byte-exact reassembly), and the whole MCP addon (with the shipped policy judging every event) on
 * arbitrary request and response bodies.
 */
import { isIP } from "node:net";
import zlib from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createBodyDecoder, createSseDecoder, type BodyMessage, type BodyProblem, type SseRecord } from "../../../src/body/index.js";
import { DEFAULT_POLICY_FILE } from "../../../src/util/package-info.js";
import { mcpAddon } from "../../../src/mcp/addon.js";
import { classifyMessage, splitBatch } from "../../../src/mcp/jsonrpc.js";
import { LegacyEndpoints } from "../../../src/mcp/legacy-endpoints.js";
import { decodeHeader, headerMismatches } from "../../../src/mcp/stateless-headers.js";
import { recordingPipeline } from "../../pipeline/pipeline-fixtures.js";
import { createPolicy } from "../../../src/policy/create-policy.js";
import { loadPolicyFile } from "../../../src/policy/load-config.js";
import { ExchangeRecord } from "../../../src/proxy/exchange-record.js";
import { SseFramer } from "../../../src/proxy/sse-framer.js";
import { formatTarget, parseConnectTarget, parseHostHeader } from "../../../src/proxy/target.js";
import { parseHost } from "../../../src/ca/host-names.js";

// ---------------------------------------------------------------------------------------------------------
// Shared arbitraries.

/** Splits `bytes` at arbitrary offsets (any order, duplicates, out of range: all folded in). */
function splitAt(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of points) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  out.push(bytes.subarray(from));
  return out;
}

const cuts = fc.array(fc.nat(), { maxLength: 16 });

/** Bytes with line ends, colons and SSE field names over-represented, and anything else possible. */
const sseishBytes = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 8 }).map((b) => Buffer.from(b)) },
      { weight: 3, arbitrary: fc.constantFrom("\n", "\r", "\r\n", "\n\n", "\r\r", "\r\n\r\n").map((s) => Buffer.from(s)) },
      { weight: 2, arbitrary: fc.constantFrom("data:", "data: ", "event: ", "id: ", "retry: ", ": ", ":").map((s) => Buffer.from(s)) },
      { weight: 1, arbitrary: fc.constantFrom("é", "😀", "\uFEFF", "\u0000", "{\"jsonrpc\":\"2.0\"").map((s) => Buffer.from(s)) },
      { weight: 1, arbitrary: fc.constantFrom(0xc3, 0xf0, 0x9f, 0x80, 0xff, 0xfe).map((b) => Buffer.from([b])) },
    ),
    { maxLength: 60 },
  )
  .map((parts) => Buffer.concat(parts));

const anyBytes = fc.oneof(fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)), sseishBytes);

// ---------------------------------------------------------------------------------------------------------

describe("SSE decoder on arbitrary bytes", () => {
  it("never throws; counts every byte; events are bounded, in order and inside the stream", () => {
    fc.assert(
      fc.property(anyBytes, cuts, fc.integer({ min: 1, max: 200 }), fc.boolean(), (bytes, cutPoints, maxEventBytes, includeComments) => {
        const records: SseRecord[] = [];
        const decoder = createSseDecoder({ maxEventBytes, includeComments, maxFieldProblems: 2, onRecord: (r) => records.push(r) });
        for (const chunk of splitAt(bytes, cutPoints)) decoder.data(chunk);
        decoder.end();
        decoder.end(); // a second end is a no-op
        decoder.data(Buffer.from("data: late\n\n")); // and data after the end is ignored
        expect(decoder.bytes).toBe(bytes.length);

        let lastOffset = -1;
        let incomplete = 0;
        let fieldProblems = 0;
        for (const record of records) {
          expect(JSON.parse(JSON.stringify(record))).toBeTypeOf("object");
          if (record.type === "event") {
            const offset = record.event.byteOffset!;
            expect(offset).toBeGreaterThan(lastOffset);
            expect(offset).toBeLessThan(bytes.length);
            lastOffset = offset;
            // A kept event is at most maxEventBytes of bytes; each byte gives at most one UTF-16 unit.
            expect(record.event.data.length).toBeLessThanOrEqual(maxEventBytes);
          } else if (record.type === "incomplete") {
            incomplete++;
            expect(record.byteOffset + record.bytes).toBe(bytes.length);
          } else if (record.type === "problem") {
            expect(["event_too_large", "sse_invalid_field"]).toContain(record.code);
            if (record.code === "sse_invalid_field" && !record.message.includes("more invalid SSE lines")) fieldProblems++;
          }
        }
        // At most one incomplete event (the tail), and invalid lines are reported a bounded number of times.
        expect(incomplete).toBeLessThanOrEqual(1);
        expect(fieldProblems).toBeLessThanOrEqual(2);
      }),
      { numRuns: 2000 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------

const contentTypes = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "text/event-stream",
  "TEXT/EVENT-STREAM;charset=UTF-8",
  "application/problem+json",
  "text/plain",
  "",
  "application/json, text/event-stream",
  "garbage/",
);

type Coding = "identity" | "gzip" | "deflate" | "br" | "gzip, br" | "x-compress" | "deflate, gzip";
const codings = fc.constantFrom<Coding>("identity", "gzip", "deflate", "br", "gzip, br", "x-compress", "deflate, gzip");

/** Encodes as the header says (last applied last), then maybe corrupts or truncates. */
function encode(bytes: Buffer, coding: Coding, damage: "none" | "truncate" | "flip" | "raw"): Buffer {
  if (damage === "raw") return bytes; // arbitrary bytes labelled as compressed
  let out = bytes;
  for (const name of coding.split(",").map((s) => s.trim())) {
    if (name === "gzip") out = zlib.gzipSync(out);
    else if (name === "deflate") out = zlib.deflateSync(out);
    else if (name === "br") out = zlib.brotliCompressSync(out);
  }
  if (damage === "truncate") return out.subarray(0, Math.floor(out.length / 2));
  if (damage === "flip" && out.length > 0) {
    const copy = Buffer.from(out);
    copy[Math.floor(copy.length / 2)]! ^= 0x5a;
    return copy;
  }
  return out;
}

const KNOWN_PROBLEMS = new Set<string>([
  "unsupported_encoding",
  "decode_error",
  "decode_limit",
  "event_too_large",
  "sse_incomplete_event",
  "sse_invalid_field",
  "empty_body",
  "invalid_utf8",
  "invalid_json",
  "body_truncated",
  "json_too_deep",
]);

async function decodeBody(
  contentType: string,
  coding: Coding,
  chunks: Buffer[],
  opts: { maxInspectBytes: number; maxEventBytes: number; maxJsonDepth: number; abort: boolean },
): Promise<{ messages: BodyMessage[]; problems: BodyProblem[] }> {
  const messages: BodyMessage[] = [];
  const problems: BodyProblem[] = [];
  const tap = createBodyDecoder({
    contentType,
    contentEncoding: coding,
    maxInspectBytes: opts.maxInspectBytes,
    maxEventBytes: opts.maxEventBytes,
    maxStreamBytes: 4 * opts.maxInspectBytes,
    maxJsonDepth: opts.maxJsonDepth,
    includeComments: true,
    onMessage: (m) => messages.push(m),
    onProblem: (p) => problems.push(p),
  });
  for (const chunk of chunks) tap.data(chunk);
  if (opts.abort) tap.abort!({ code: "upstream_reset", message: "cut" });
  else tap.end();
  // `done` must settle, and soon: zlib is asynchronous but bounded here.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    tap.done,
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("body decoder never settled")), 2_000))),
  ]);
  clearTimeout(timer);
  return { messages, problems };
}

describe("body decoder (media type × content coding) on arbitrary bytes", () => {
  it("never throws, always settles, reports only known problems and never more than the caps", async () => {
    await fc.assert(
      fc.asyncProperty(
        contentTypes,
        codings,
        fc.constantFrom("none", "none", "truncate", "flip", "raw"),
        anyBytes,
        cuts,
        fc.record({
          maxInspectBytes: fc.integer({ min: 1, max: 300 }),
          maxEventBytes: fc.integer({ min: 1, max: 300 }),
          maxJsonDepth: fc.integer({ min: 0, max: 5 }),
          abort: fc.boolean(),
        }),
        async (contentType, coding, damage, plain, cutPoints, opts) => {
          const wire = encode(plain, coding, damage as "none");
          const { messages, problems } = await decodeBody(contentType, coding, splitAt(wire, cutPoints), opts);
          for (const p of problems) expect(KNOWN_PROBLEMS.has(p.code), `${p.code}: ${p.message}`).toBe(true);
          for (const m of messages) {
            if (m.kind === "json") {
              expect(m.bytes).toBeLessThanOrEqual(opts.maxInspectBytes);
            } else if (m.kind === "sse") {
              expect(m.event.data.length).toBeLessThanOrEqual(opts.maxEventBytes);
            }
          }
          expect(messages.filter((m) => m.kind === "json").length).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 700 },
    );
  });

  it("a JSON body gives the same result whatever the chunking, compressed or not", async () => {
    const jsonish = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? "null")),
      anyBytes,
      fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify(v)?.slice(0, -1) ?? "")),
    );
    await fc.assert(
      fc.asyncProperty(jsonish, fc.constantFrom<Coding>("identity", "gzip", "br"), cuts, async (plain, coding, cutPoints) => {
        const opts = { maxInspectBytes: 4096, maxEventBytes: 4096, maxJsonDepth: 3, abort: false };
        const wire = encode(plain, coding, "none");
        const whole = await decodeBody("application/json", coding, [wire], opts);
        const chunked = await decodeBody("application/json", coding, splitAt(wire, cutPoints), opts);
        expect(chunked).toEqual(whole);
      }),
      { numRuns: 250 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------

const KINDS = ["request", "notification", "response", "error", "invalid"];

describe("JSON-RPC classification on any value", () => {
  it("classifyMessage and splitBatch never throw on any JS value (prototypes, boxed values, sparse arrays...)", () => {
    const anything = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
      withUnicodeString: true,
      maxDepth: 3,
    });
    fc.assert(
      fc.property(anything, (value) => {
        const { batch, messages } = splitBatch(value);
        expect(messages.length).toBeGreaterThan(0);
        expect(batch).toBe(Array.isArray(value));
        for (const m of messages) {
          const c = classifyMessage(m);
          expect(KINDS).toContain(c.kind);
          if (c.kind === "invalid") expect(typeof c.reason).toBe("string");
        }
      }),
      { numRuns: 1500 },
    );
  });

  it("any JSON text (hostile keys such as __proto__ included) parses and classifies without throwing", () => {
    const hostileKey = fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "jsonrpc", "id", "method", "result", "error", "params");
    const member = fc.tuple(hostileKey, fc.jsonValue({ maxDepth: 2 }));
    const objectText = fc
      .array(member, { maxLength: 8 })
      .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`);
    const text = fc.oneof(objectText, objectText.map((o) => `[${o},${o}]`), fc.json({ maxDepth: 3 }));
    fc.assert(
      fc.property(text, (json) => {
        const value: unknown = JSON.parse(json);
        for (const m of splitBatch(value).messages) {
          const c = classifyMessage(m);
          expect(KINDS).toContain(c.kind);
          // Whatever the keys, classification never pollutes prototypes.
          expect(({} as Record<string, unknown>).jsonrpc).toBeUndefined();
        }
      }),
      { numRuns: 1500 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------

const hostileText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 80 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc
    .array(
      fc.constantFrom("[", "]", ":", ".", "..", "/", "%2e", "\0", "\r\n", " ", "\t", "@", "#", "?", "xn--", "a", "0", "65535", "65536", "::1", "127.0.0.1", "-", "_", "é", "\uFF0E", "１"),
      { maxLength: 20 },
    )
    .map((parts) => parts.join("")),
);

const hostnameLabel = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?$/);
const validTarget = fc.record({
  host: fc.oneof(
    // A DNS name's last label is never a number (the resolver would read the name as an IPv4 literal).
    fc
      .tuple(fc.array(hostnameLabel, { maxLength: 3 }), fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z]$/))
      .filter(([, last]) => !/^0x[0-9a-f]*$/.test(last))
      .map(([labels, last]) => [...labels, last].join(".")),
    fc.ipV4(),
    fc.ipV6(),
  ),
  port: fc.integer({ min: 1, max: 65535 }),
});

function assertSaneTarget(result: ReturnType<typeof parseConnectTarget>): void {
  if (!result.ok) {
    expect(typeof result.reason).toBe("string");
    return;
  }
  const { host, port } = result.target;
  expect(Number.isInteger(port) && port >= 1 && port <= 65535).toBe(true);
  expect(host.length).toBeGreaterThan(0);
  expect(host.length).toBeLessThanOrEqual(253);
  expect(host).toBe(host.toLowerCase());
  // A DNS name of letters, digits, '-', '_' and dots, or an IP literal: nothing a path, a log line or a
  // header could be injected with.
  if (isIP(host) === 0) expect(host).toMatch(/^[a-z0-9_.-]+$/);
}

/**
 * The 16 bytes an IP literal routes to, from the certificate code's own reading (not the target parser's):
 * IPv4 as ::ffff:a.b.c.d, and an IPv4-compatible ::a.b.c.d (other than :: and ::1) the same way.
 */
function routeBytes(host: string): Buffer {
  const subject = parseHost(host);
  if (subject.kind !== "ip") throw new Error(`${host} is no IP literal`);
  const bytes = Buffer.alloc(16);
  if (subject.bytes.length === 4) {
    bytes.writeUInt16BE(0xffff, 10);
    subject.bytes.copy(bytes, 12);
    return bytes;
  }
  subject.bytes.copy(bytes);
  const compatible = bytes.subarray(0, 12).every((b) => b === 0) && bytes.readUInt32BE(12) > 1;
  if (compatible) bytes.writeUInt16BE(0xffff, 10);
  return bytes;
}

describe("target parsing on arbitrary strings", () => {
  it("parseConnectTarget / parseHostHeader never throw and only accept sane targets", () => {
    fc.assert(
      fc.property(hostileText, hostileText, fc.integer({ min: 1, max: 65535 }), (a, b, defaultPort) => {
        for (const input of [a, `${a}:${b}`, `[${a}]:${b}`, `${a}.${b}:443`]) {
          assertSaneTarget(parseConnectTarget(input));
          assertSaneTarget(parseHostHeader(input, defaultPort));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("an accepted name is one the resolver cannot read as an IP address (0x7f.1, 0x7f000001, 1.2.3.0x4)", () => {
    const numericish = fc
      .array(fc.oneof(fc.nat({ max: 300 }).map(String), fc.nat().map((n) => `0x${n.toString(16)}`), fc.constantFrom("0x", "00", "0"), hostnameLabel), {
        minLength: 1,
        maxLength: 5,
      })
      .map((labels) => labels.join("."));
    fc.assert(
      fc.property(numericish, fc.boolean(), (name, trailingDot) => {
        const host = trailingDot ? `${name}.` : name;
        const result = parseConnectTarget(`${host}:443`);
        if (!result.ok || isIP(result.target.host) !== 0) return;
        // WHATWG URL applies the same IPv4 number rules as inet_aton: a name it parses must stay a name.
        let parsed: string | undefined;
        try {
          parsed = new URL(`http://${host}/`).hostname;
        } catch {
          parsed = undefined;
        }
        if (parsed !== undefined) expect(isIP(parsed)).toBe(0);
        expect(result.target.host.split(".").at(-1)).not.toMatch(/^(?:\d+|0x[0-9a-f]*)$/);
      }),
      { numRuns: 2000 },
    );
    for (const alias of ["0x7f.1", "0x7f000001", "1.2.3.0x4", "0x7F.0.0.1", "127.0x0.0.1", "a.1"]) {
      expect(parseConnectTarget(`${alias}:443`)).toMatchObject({ ok: false });
      expect(parseHostHeader(alias, 443)).toMatchObject({ ok: false });
    }
  });

  it("an accepted target is read once for good: its formatTarget parses back to itself; an IP literal keeps the address it routes to", () => {
    fc.assert(
      fc.property(validTarget, fc.integer({ min: 1, max: 65535 }), (target, defaultPort) => {
        const written = { host: target.host.toLowerCase().replace(/^\[|\]$/g, ""), port: target.port };
        const first = parseConnectTarget(formatTarget(written));
        if (!first.ok) {
          // Only the unspecified addresses (0/8, ::, and their mapped forms) are refused among valid spellings.
          expect(first.reason).toContain("unspecified address");
          const bytes = routeBytes(written.host);
          expect(bytes.every((b) => b === 0) || bytes.subarray(10, 13).equals(Buffer.from([0xff, 0xff, 0]))).toBe(true);
          return;
        }
        if (isIP(written.host) === 0) expect(first.target).toEqual(written);
        else expect(routeBytes(first.target.host).equals(routeBytes(written.host))).toBe(true);
        const text = formatTarget(first.target);
        expect(parseConnectTarget(text)).toMatchObject({ ok: true, target: first.target });
        expect(parseHostHeader(text, defaultPort)).toMatchObject({ ok: true, target: first.target });
        expect(parseHostHeader(` ${text.toUpperCase()} `, defaultPort)).toMatchObject({ ok: true, target: first.target });
      }),
      { numRuns: 1500 },
    );
    for (const [spelled, read] of [
      ["[::ffff:127.0.0.1]", "127.0.0.1"],
      ["[::ffff:7f00:1]", "127.0.0.1"],
      ["[::127.0.0.1]", "127.0.0.1"],
      ["[0:0:0:0:0:0:0:1]", "::1"],
      ["[::0001]", "::1"],
      ["[64:ff9b::7f00:1]", "64:ff9b::7f00:1"],
    ] as const) {
      expect(parseConnectTarget(`${spelled}:443`), spelled).toMatchObject({ ok: true, target: { host: read, port: 443 } });
    }
  });

});

// ---------------------------------------------------------------------------------------------------------

const headerValue = fc.oneof(fc.constant(undefined), hostileText, fc.array(hostileText, { maxLength: 3 }));
const base64Of = (s: string) => `=?base64?${Buffer.from(s, "utf8").toString("base64")}?=`;

describe("stateless-revision headers on arbitrary values", () => {
  it("decodeHeader never throws and returns a string or undefined", () => {
    fc.assert(
      fc.property(
        fc.oneof(headerValue, hostileText.map((s) => `=?base64?${s}?=`)),
        (value) => {
          const decoded = decodeHeader(value);
          expect(decoded === undefined || typeof decoded === "string").toBe(true);
          if (value === undefined || (Array.isArray(value) && value.length === 0)) expect(decoded).toBeUndefined();
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("base64-encoded values round-trip (any Unicode, CR/LF and NUL included)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), (s) => {
        expect(decodeHeader(base64Of(s))).toBe(s);
      }),
      { numRuns: 1500 },
    );
  });

  it("headerMismatches never throws, and flags exactly the disagreements", () => {
    const method = fc.constantFrom("tools/call", "prompts/get", "resources/read", "ping", "initialize");
    fc.assert(
      fc.property(
        method,
        fc.string({ unit: "grapheme", maxLength: 30 }),
        fc.string({ unit: "grapheme", maxLength: 30 }),
        fc.boolean(),
        fc.record({ "mcp-method": headerValue, "mcp-name": headerValue, "mcp-protocol-version": headerValue }, { requiredKeys: [] }),
        fc.anything({ maxDepth: 2 }),
        (m, name, other, agree, noise, junk) => {
          // Arbitrary headers and bodies: no exception, and the answer is undefined or a non-empty list.
          for (const body of [junk, { method: m, params: junk }, { method: m, params: { name: junk, uri: junk, _meta: junk } }]) {
            const out = headerMismatches(noise, body);
            expect(out === undefined || (Array.isArray(out) && out.length > 0)).toBe(true);
          }
          // Well-formed: the headers agree with the body exactly when the values are equal.
          const field = m === "resources/read" ? "uri" : "name";
          const headerName = agree ? name : other;
          const out = headerMismatches({ "mcp-method": base64Of(m), "mcp-name": base64Of(headerName) }, { method: m, params: { [field]: name } });
          const named = ["tools/call", "prompts/get", "resources/read"].includes(m);
          expect(out === undefined).toBe(!named || headerName === name);
        },
      ),
      { numRuns: 1500 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------

describe("legacy endpoint table on arbitrary strings and bases", () => {
  it("register never throws, stays bounded, and finds what it registered", () => {
    const base = fc.oneof(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      validTarget.map((t) => `https://${formatTarget(t)}/sse`),
      fc.constant("http://127.0.0.1:8080/sse?x=1"),
    );
    const data = fc.oneof(
      hostileText,
      hostileText.map((s) => `/messages?sessionId=${s}`),
      fc.webUrl({ withQueryParameters: true }),
      fc.constantFrom("javascript:alert(1)", "//evil.example/x", "\\\\evil\\x", "http://[::1", "data:,x", "  /m?x=1  ", "file:///etc/passwd"),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(data, base), { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 5 }), (entries, max) => {
        const table = new LegacyEndpoints({ maxEntries: max, maxBytes: 1 << 20 });
        for (const [endpoint, baseText] of entries) {
          const baseUrl = new URL(baseText);
          const session = table.register(endpoint, baseUrl, "flow-1", "srv");
          expect(table.all().length).toBeLessThanOrEqual(max);
          if (!session) continue;
          expect(session.key.endsWith(session.endpointPath)).toBe(true);
          const server = session.key.slice(0, session.key.length - session.endpointPath.length);
          expect(table.lookup(server, session.endpointPath)).toBe(session);
          // A relative endpoint stays on the stream's own origin. Read as a URL parser (and so a client) reads it:
          // tabs and line breaks anywhere are dropped, C0 controls and spaces at either end (`/\n/x` is `//x`).
          const read = endpoint.replace(/[\t\n\r]/g, "").replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, "");
          if (read.startsWith("/") && !read.startsWith("//") && !endpoint.includes("\\")) {
            const port = baseUrl.port || (baseUrl.protocol === "https:" ? "443" : "80");
            expect(server).toBe(`${baseUrl.hostname}:${port}`);
          }
          table.remove(session);
          expect(table.lookup(server, session.endpointPath)).toBeUndefined();
        }
      }),
      { numRuns: 800 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------

function frame(chunks: Buffer[], maxEventBytes: number) {
  const out: { judged: boolean; raw: Buffer }[] = [];
  const framer = new SseFramer(
    (raw) => out.push({ judged: true, raw: Buffer.from(raw) }),
    maxEventBytes,
    (raw) => out.push({ judged: false, raw: Buffer.from(raw) }),
  );
  for (const chunk of chunks) framer.push(chunk);
  framer.flush();
  expect(framer.midEvent).toBe(false);
  return out;
}

describe("raw SSE framer", () => {
  it("what it emits, concatenated in order, is exactly the input, for any input, chunking and limit", () => {
    fc.assert(
      fc.property(anyBytes, cuts, fc.integer({ min: 1, max: 120 }), (bytes, cutPoints, maxEventBytes) => {
        const out = frame(splitAt(bytes, cutPoints), maxEventBytes);
        expect(Buffer.concat(out.map((o) => o.raw)).equals(bytes)).toBe(true);
        for (const o of out) expect(o.raw.length).toBeGreaterThan(0);
      }),
      { numRuns: 3000 },
    );
  });

  it("without a size limit, the events it judges do not depend on the chunking", () => {
    fc.assert(
      fc.property(sseishBytes, cuts, (bytes, cutPoints) => {
        const whole = frame([bytes], Infinity);
        expect(frame(splitAt(bytes, cutPoints), Infinity)).toEqual(whole);
        // Only the unterminated tail is passed on unjudged.
        expect(whole.filter((o) => !o.judged).length).toBeLessThanOrEqual(1);
        if (whole.length > 0 && !whole.at(-1)!.judged) expect(whole.slice(0, -1).every((o) => o.judged)).toBe(true);
      }),
      { numRuns: 1500 },
    );
  });
});

// ---------------------------------------------------------------------------------------------------------

const policyConfig = loadPolicyFile(DEFAULT_POLICY_FILE);

/** A JSON-RPC-looking body, a broken one, or anything at all. */
const mcpishBody = fc.oneof(
  anyBytes,
  fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? "")),
  fc
    .record({
      jsonrpc: fc.constantFrom("2.0", "1.0", 2),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 6 }), fc.constant(null), fc.double()),
      method: fc.constantFrom("initialize", "tools/call", "tools/list", "notifications/progress", "notifications/cancelled", "ping", "x"),
      params: fc.oneof(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 })), fc.jsonValue({ maxDepth: 2 })),
      result: fc.jsonValue({ maxDepth: 3 }),
      error: fc.jsonValue({ maxDepth: 2 }),
    }, { requiredKeys: ["jsonrpc"] })
    .chain((msg) => fc.constantFrom(JSON.stringify(msg), JSON.stringify([msg, msg]), `data: ${JSON.stringify(msg)}\n\n`, `event: endpoint\ndata: ${String(msg.method)}?s=1\n\n`))
    .map((s) => Buffer.from(s)),
);

async function runAddon(input: {
  method: string;
  requestType: string;
  requestCoding: Coding;
  requestBody: Buffer;
  requestCuts: number[];
  hinted: boolean;
  status: number;
  responseType: string;
  responseCoding: Coding;
  responseBody: Buffer;
  responseCuts: number[];
  outcome: "end" | "abort" | "client_aborted";
}): Promise<Record<string, unknown>[]> {
  const policy = createPolicy(policyConfig, { pins: null, now: () => 0 });
  const { pipeline, records: out } = recordingPipeline(policy, { payloads: { payloads: "full", maxPayloadBytes: 1024 }, now: () => 0, maxPending: 8, maxSessions: 4 });
  const addon = mcpAddon(pipeline, { maxInspectBytes: 2048, maxJsonDepth: 8 });
  const ex = new ExchangeRecord(
    "mitm",
    { address: "127.0.0.1", port: 50000, tls: "TLSv1.3" },
    { host: "mcp.example.test", port: 443, secure: true, tls: "TLSv1.3", insecure: false },
    {
      method: input.method,
      path: "/mcp",
      httpVersion: "1.1",
      headers: {
        "content-type": input.requestType,
        "content-encoding": input.requestCoding,
        ...(input.hinted ? { "mcp-session-id": "s-1", "mcp-protocol-version": "2025-11-25", "mcp-method": "tools/call", "mcp-name": "=?base64?w6k=?=" } : {}),
      },
    },
  );
  addon.requestHeaders!(ex);
  for (const chunk of splitAt(encode(input.requestBody, input.requestCoding, "none"), input.requestCuts)) {
    ex.requestBytes += chunk.length;
    for (const tap of ex.requestTaps) tap.data(chunk);
  }
  for (const tap of ex.requestTaps) tap.end();
  ex.response = {
    status: input.status,
    statusMessage: "",
    headers: { "content-type": input.responseType, "content-encoding": input.responseCoding, "mcp-session-id": "s-2" },
    source: "upstream",
  };
  addon.responseHeaders!(ex);
  for (const chunk of splitAt(encode(input.responseBody, input.responseCoding, "none"), input.responseCuts)) {
    ex.responseBytes += chunk.length;
    for (const tap of ex.responseTaps) tap.data(chunk);
  }
  if (input.outcome === "end") for (const tap of ex.responseTaps) tap.end();
  else {
    ex.fail({ code: input.outcome === "abort" ? "upstream_reset" : "client_aborted", message: "cut" });
    for (const tap of ex.responseTaps) tap.abort?.(ex.error!);
  }
  addon.exchangeEnd!(ex);
  const flow = ex.notes.get("mcp") as { decoding: Promise<void>[] } | undefined;
  await Promise.allSettled(flow?.decoding ?? []);
  await new Promise((resolve) => setImmediate(resolve));
  await addon.close!();
  return out;
}

describe("the whole MCP addon on arbitrary bodies", () => {
  it("never throws; every record is a JSON object of a known kind", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          method: fc.constantFrom("POST", "GET", "DELETE"),
          requestType: contentTypes,
          requestCoding: fc.constantFrom<Coding>("identity", "identity", "gzip", "x-compress"),
          requestBody: mcpishBody,
          requestCuts: cuts,
          hinted: fc.boolean(),
          status: fc.constantFrom(200, 202, 404, 500),
          responseType: contentTypes,
          responseCoding: fc.constantFrom<Coding>("identity", "identity", "gzip", "br"),
          responseBody: mcpishBody,
          responseCuts: cuts,
          outcome: fc.constantFrom<"end" | "abort" | "client_aborted">("end", "end", "abort", "client_aborted"),
        }),
        async (input) => {
          const records = await runAddon(input);
          for (const record of records) {
            const text = JSON.stringify(record);
            const parsed = JSON.parse(text) as Record<string, unknown>;
            expect(parsed).toBeTypeOf("object");
            expect(["rpc", "session"]).toContain(parsed.event);
            if (parsed.event === "rpc") {
              expect(["request", "notification", "response", "error", "invalid", "unanswered"]).toContain(parsed.kind);
              expect(["client_to_server", "server_to_client"]).toContain(parsed.direction);
            }
          }
        },
      ),
      { numRuns: 450 },
    );
  });
});
