/**
 * The log must not depend on how TCP happened to cut the bytes. `mcpAddon` is driven by hand (no
 * network): an `ExchangeRecord` built here, the addon's hooks called in the order the forwarder calls
 * them, and the taps fed the same bytes in different chunkings. The records (time fields aside) must be
 * identical to those of the body delivered in one piece.
 */
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mcpAddon } from "../../src/mcp/addon.js";
import { recordingPipeline, shippedPolicy } from "../pipeline/pipeline-fixtures.js";
import { ExchangeRecord } from "../../src/proxy/exchange-record.js";

const REQUEST = Buffer.from(
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "translate", arguments: { text: "naïve café — 日本語 🙂", to: "fr" }, _meta: { progressToken: "p-1" } },
  }),
);

/** A Python-ish stream (CRLF, comments, multi-line data) with TypeScript-ish events mixed in (LF, ids). */
const SSE = Buffer.from(
  [
    ": ping - 2025-11-25 10:00:00\r\n\r\n",
    'event: message\r\nid: ev-1\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress",\r\ndata: "params":{"progressToken":"p-1","progress":1,"total":2,"message":"étape 1 — 日本"}}\r\n\r\n',
    'event: message\nid: ev-2\ndata: {"jsonrpc":"2.0","id":"srv-1","method":"elicitation/create","params":{"message":"Confirmer ? 🙂","requestedSchema":{"type":"object","properties":{}}}}\n\n',
    ": ping\r\n\r\n",
    'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"ligne 1\\nligne 2 ✓"}}\r\r',
    'event: message\r\nid: ev-3\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-1","progress":2,"total":2}}\r\n\r\n',
    'event: message\r\nid: ev-4\r\ndata: {"jsonrpc":"2.0","id":1,\r\ndata: "result":{"content":[{"type":"text","text":"naïf café — 日本語 🙂"}]}}\r\n\r\n',
  ].join(""),
  "utf8",
);

type Rec = Record<string, unknown>;

/** Time and identity fields differ from run to run; everything else must not. */
function normalize(record: Rec): Rec {
  const { latencyMs: _l, durationMs: _d, flow: _f, ...rest } = record;
  if (rest.related) {
    const { elapsedMs: _e, ...related } = rest.related as Rec;
    rest.related = related;
  }
  return rest;
}

async function settle(ex: ExchangeRecord): Promise<void> {
  const flow = ex.notes.get("mcp") as { decoding: Promise<void>[] };
  await Promise.allSettled(flow.decoding);
  // `finish` runs once the decoders have settled.
  await new Promise((resolve) => setImmediate(resolve));
}

/** Runs one exchange through the addon; returns the records written, normalised. */
async function run(requestChunks: Buffer[], responseChunks: Buffer[], encoding?: string): Promise<Rec[]> {
  const { pipeline, records } = recordingPipeline(shippedPolicy(() => 0), { payloads: { payloads: "full", maxPayloadBytes: 1 << 20 }, now: () => 0 });
  const out = records as Rec[];
  const addon = mcpAddon(pipeline, { maxInspectBytes: 1 << 20 });
  const ex = new ExchangeRecord(
    "mitm",
    { address: "127.0.0.1", port: 50000, tls: "TLSv1.3" },
    { host: "mcp.example.test", port: 443, secure: true, tls: "TLSv1.3", insecure: false },
    {
      method: "POST",
      path: "/mcp",
      httpVersion: "1.1",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": "sess-chunks",
        "mcp-protocol-version": "2025-11-25",
      },
    },
  );
  addon.requestHeaders!(ex);
  for (const chunk of requestChunks) {
    ex.requestBytes += chunk.length;
    for (const tap of ex.requestTaps) tap.data(chunk);
  }
  for (const tap of ex.requestTaps) tap.end();
  ex.response = {
    status: 200,
    statusMessage: "OK",
    headers: { "content-type": "text/event-stream; charset=utf-8", ...(encoding ? { "content-encoding": encoding } : {}) },
    source: "upstream",
  };
  addon.responseHeaders!(ex);
  for (const chunk of responseChunks) {
    ex.responseBytes += chunk.length;
    for (const tap of ex.responseTaps) tap.data(chunk);
  }
  for (const tap of ex.responseTaps) tap.end();
  ex.endedAt = Date.now();
  addon.exchangeEnd!(ex);
  await settle(ex);
  // Whatever is still open (the server's elicitation request) is reported at close.
  await addon.close!();
  return out.map(normalize);
}

function cut(bytes: Buffer, points: number[]): Buffer[] {
  const sorted = [...new Set(points)].filter((p) => p > 0 && p < bytes.length).sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const p of sorted) {
    chunks.push(bytes.subarray(from, p));
    from = p;
  }
  chunks.push(bytes.subarray(from));
  return chunks;
}

/** Offsets that fall inside a multi-byte UTF-8 character. */
function insideCharacters(bytes: Buffer): number[] {
  const out: number[] = [];
  for (let i = 1; i < bytes.length; i++) if ((bytes[i]! & 0xc0) === 0x80) out.push(i);
  return out;
}

/** Offsets between a CR and the LF that follows it. */
function insideCrlf(bytes: Buffer): number[] {
  const out: number[] = [];
  for (let i = 1; i < bytes.length; i++) if (bytes[i - 1] === 0x0d && bytes[i] === 0x0a) out.push(i);
  return out;
}

const everyByte = (bytes: Buffer) => Array.from({ length: bytes.length }, (_, i) => i);

describe("chunk boundaries do not change the log", () => {
  let reference: Rec[];

  it("the whole body at once gives the expected records", async () => {
    reference = await run([REQUEST], [SSE]);
    const summary = reference.map((r) => [r.event, r.kind ?? r.phase, r.method ?? null, r.id ?? null]);
    expect(summary).toEqual([
      ["rpc", "request", "tools/call", 1],
      ["rpc", "notification", "notifications/progress", null],
      ["rpc", "request", "elicitation/create", "srv-1"],
      ["rpc", "notification", "notifications/message", null],
      ["rpc", "notification", "notifications/progress", null],
      ["rpc", "response", "tools/call", 1],
      ["rpc", "unanswered", "elicitation/create", "srv-1"],
      ["session", "end", null, null],
    ]);
    const byKind = (kind: string, method: string) => reference.find((r) => r.kind === kind && r.method === method)!;
    expect(byKind("notification", "notifications/progress")).toMatchObject({
      related: { id: 1, method: "tools/call", tool: "translate" },
      params: { message: "étape 1 — 日本" },
      sseEventId: "ev-1",
    });
    expect(byKind("notification", "notifications/message")).toMatchObject({ params: { data: "ligne 1\nligne 2 ✓" } });
    expect(byKind("response", "tools/call")).toMatchObject({ sseEventId: "ev-4", result: { content: [{ text: "naïf café — 日本語 🙂" }] } });
    expect(byKind("unanswered", "elicitation/create")).toMatchObject({ direction: "server_to_client", reason: "proxy stopped" });
    expect(reference.filter((r) => r.kind === "invalid")).toEqual([]);
  });

  it("one byte at a time", async () => {
    expect(await run(cut(REQUEST, everyByte(REQUEST)), cut(SSE, everyByte(SSE)))).toEqual(reference);
  });

  it("cut inside every multi-byte character", async () => {
    const points = insideCharacters(SSE);
    expect(points.length).toBeGreaterThan(20);
    expect(await run(cut(REQUEST, insideCharacters(REQUEST)), cut(SSE, points))).toEqual(reference);
    // And one cut at a time, so each split character is the only one.
    for (const p of points) expect(await run([REQUEST], cut(SSE, [p]))).toEqual(reference);
  });

  it("cut between every CR and its LF", async () => {
    const points = insideCrlf(SSE);
    expect(points.length).toBeGreaterThan(10);
    expect(await run([REQUEST], cut(SSE, points))).toEqual(reference);
    for (const p of points) expect(await run([REQUEST], cut(SSE, [p]))).toEqual(reference);
  });

  it("any chunking (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: SSE.length - 1 }), { maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: REQUEST.length - 1 }), { maxLength: 10 }),
        async (ssePoints, requestPoints) => {
          expect(await run(cut(REQUEST, requestPoints), cut(SSE, ssePoints))).toEqual(reference);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("any chunking of a gzip-compressed stream (property)", async () => {
    const gz = gzipSync(SSE);
    expect(await run([REQUEST], [gz], "gzip")).toEqual(reference);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: gz.length - 1 }), { maxLength: 40 }), async (points) => {
        expect(await run([REQUEST], cut(gz, points), "gzip")).toEqual(reference);
      }),
      { numRuns: 100 },
    );
  });
});
