/**
 * The differential harness under a generator: requests built from framing, encoding, charset and header
 * variants (method, HTTP version, Content-Length / Transfer-Encoding combinations, chunk splits and
 * extensions, Connection tokens, Upgrade, Expect, content types (one or two lines, text/event-stream) and
 * charsets, bodies in UTF-16 or UTF-32 with or without a label, content codings, invalid UTF-8, a
 * byte-order mark, a tool name behind a member differing from `name` only in case, batches, a request
 * hidden in a body, a pipelined request after it), sent as raw bytes through the proxy in both policy
 * modes, on both routes. After each, the bytes the upstream received are parsed as a lenient server would
 * and compared with the records (test/helpers/differential-check.ts): a request the upstream could read
 * without an `http` record always fails; a JSON-RPC message without an `rpc` record, or a denied one that
 * reached the upstream in enforce mode, fails too.
 */
import zlib from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeText } from "../../helpers/charsets.js";
import { charsetLabels, parseAsUpstream } from "../../helpers/differential-check.js";
import {
  ALLOWED_TOOL,
  DENIED_TOOL,
  differentialFindings,
  sendRaw,
  startRig,
  type PolicyMode,
  type Rig,
  type Route,
} from "../../helpers/differential-rig.js";

const METHODS = ["GET", "POST", "DELETE", "HEAD", "OPTIONS", "PUT", "PATCH"] as const;
const FRAMINGS = ["content-length", "chunked", "none", "content-length+chunked", "Chunked", "chunked ", "gzip, chunked", "identity", "chunked, chunked"] as const;
const CONNECTION_TOKENS = ["keep-alive", "Upgrade", "Content-Length", "Transfer-Encoding", "Host", "Content-Type", "Content-Encoding", "Mcp-Session-Id", "X-Note"] as const;
const CONTENT_TYPES = [null, "application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/json; charset=iso-8859-1", "application/json; charset=utf-16", "text/plain", "application/x-ndjson", "text/event-stream", "text/plain; charset=utf-16le",
  // Charsets a strict parser misses and Python's email.message reads: NEL (latin-1, or UTF-8 C2 85) before the
  // name, spaces and quotes around `=`, the RFC 2231 form.
  "application/json;\x85charset=utf-16le", "application/json;\xc2\x85charset=utf-16le", "application/json; CHARSET = \"utf-16le\"", "application/json; charset*=utf-8''utf-16le"] as const;
/** A second Content-Type line after the first: servers differ on which one counts. */
const SECOND_CONTENT_TYPES = [null, null, null, null, null, null, "application/json", "text/plain; charset=utf-16le"] as const;
/** The body's encoding: UTF-8, the last Content-Type's charset, or a wide encoding no header names (no byte-order mark). */
const BODY_CHARSETS = ["utf-8", "as labelled", "utf-16le", "utf-16be", "utf-32le", "utf-32be"] as const;
/** Wide bodies are mostly refused: one variant in seven, so that enough variants still reach the upstream to compare. */
const bodyCharsets = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom<(typeof BODY_CHARSETS)[number]>("utf-8", "utf-8", "as labelled") },
  { weight: 1, arbitrary: fc.constantFrom<(typeof BODY_CHARSETS)[number]>("utf-16le", "utf-16be", "utf-32le", "utf-32be") },
);
const CODINGS = [null, "identity", "gzip", "gzip (body not compressed)", "br (body not compressed)", "x-custom"] as const;
/**
 * The denied call's params: the tool as the rule names it, as a server that normalises names would still run
 * it, or behind a member that differs from `name` only in case (Go's encoding/json takes the last such one).
 */
const SPELLINGS: readonly Record<string, string>[] = [
  ...[DENIED_TOOL, DENIED_TOOL, "Delete_Everything", `${DENIED_TOOL} `, "delete\u200b_everything"].map((name) => ({ name })),
  { name: ALLOWED_TOOL, Name: DENIED_TOOL },
];
const BODIES = ["allowed call", "denied call", "batch with a denied call", "notification", "request hidden in the body", "empty"] as const;

interface Variant {
  route: Route;
  method: (typeof METHODS)[number];
  version: "1.1" | "1.0";
  framing: (typeof FRAMINGS)[number];
  chunks: number;
  chunkExtension: boolean;
  connection: (typeof CONNECTION_TOKENS)[number][];
  upgrade: null | "websocket" | "h2c";
  expect100: boolean;
  contentType: (typeof CONTENT_TYPES)[number];
  secondContentType: (typeof SECOND_CONTENT_TYPES)[number];
  bodyCharset: (typeof BODY_CHARSETS)[number];
  coding: (typeof CODINGS)[number];
  body: (typeof BODIES)[number];
  spelling: Record<string, string>;
  invalidUtf8: boolean;
  bom: boolean;
  pipelined: boolean;
}

const variants: fc.Arbitrary<Variant> = fc.record({
  route: fc.constantFrom<Route>("tunnel", "absolute"),
  method: fc.constantFrom(...METHODS),
  version: fc.constantFrom<"1.1" | "1.0">("1.1", "1.1", "1.1", "1.0"),
  framing: fc.constantFrom(...FRAMINGS),
  chunks: fc.integer({ min: 1, max: 3 }),
  chunkExtension: fc.boolean(),
  connection: fc.subarray([...CONNECTION_TOKENS], { maxLength: 3 }),
  upgrade: fc.constantFrom<Variant["upgrade"]>(null, null, null, "websocket", "h2c"),
  expect100: fc.boolean(),
  contentType: fc.constantFrom(...CONTENT_TYPES),
  secondContentType: fc.constantFrom(...SECOND_CONTENT_TYPES),
  bodyCharset: bodyCharsets,
  coding: fc.constantFrom(...CODINGS),
  body: fc.constantFrom(...BODIES),
  spelling: fc.constantFrom(...SPELLINGS),
  invalidUtf8: fc.boolean(),
  bom: fc.boolean(),
  pipelined: fc.boolean(),
});

function carriesRpc(v: Variant): boolean {
  return v.body !== "empty" && v.body !== "request hidden in the body";
}

const message = (id: number | null, tool: Record<string, string>): Record<string, unknown> => ({
  jsonrpc: "2.0",
  ...(id === null ? {} : { id }),
  method: id === null ? "notifications/progress" : "tools/call",
  params: id === null ? { progressToken: "p", progress: 1 } : { ...tool, arguments: { note: "aXYZb" } },
});

/** The charset the body is written in. */
function charsetOf(v: Variant): string {
  if (v.bodyCharset !== "as labelled") return v.bodyCharset;
  const label = charsetLabels(v.secondContentType ?? v.contentType ?? "").at(-1) ?? "utf-8";
  return label.toLowerCase() === "utf-16" ? "utf-16le" : label;
}

/** The body's bytes, before any content coding. */
function bodyBytes(v: Variant, path: string, u: string): Buffer {
  if (v.body === "empty") return Buffer.alloc(0);
  if (v.body === "request hidden in the body") {
    const hidden = JSON.stringify(message(99, { name: DENIED_TOOL }));
    return Buffer.from(`POST ${path}-inner HTTP/1.1\r\nHost: ${u}\r\nContent-Type: application/json\r\nContent-Length: ${hidden.length}\r\n\r\n${hidden}`, "latin1");
  }
  const value =
    v.body === "allowed call" ? message(1, { name: ALLOWED_TOOL })
    : v.body === "denied call" ? message(2, v.spelling)
    : v.body === "notification" ? message(null, {})
    : [message(3, { name: ALLOWED_TOOL }), message(4, v.spelling)];
  let bytes = encodeText(JSON.stringify(value), charsetOf(v));
  if (v.invalidUtf8) {
    const at = bytes.indexOf("XYZ");
    if (at >= 0) bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at + 3)]);
  }
  if (v.bom) bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
  return bytes;
}

function chunkedBody(body: Buffer, pieces: number, extension: boolean): Buffer {
  const out: Buffer[] = [];
  const size = Math.max(1, Math.ceil(body.length / pieces));
  for (let at = 0; at < body.length; at += size) {
    const piece = body.subarray(at, at + size);
    out.push(Buffer.from(`${piece.length.toString(16)}${extension ? ";x=1" : ""}\r\n`, "latin1"), piece, Buffer.from("\r\n"));
  }
  out.push(Buffer.from("0\r\n\r\n"));
  return Buffer.concat(out);
}

/** The raw request (and a pipelined follow-up) for one variant. */
function build(v: Variant, path: string, u: string): Buffer {
  let body = bodyBytes(v, path, u);
  const target = v.route === "absolute" ? `http://${u}${path}` : path;
  const head: string[] = [`${v.method} ${target} HTTP/${v.version}`, `Host: ${u}`, "Accept: application/json, text/event-stream"];
  if (v.contentType) head.push(`Content-Type: ${v.contentType}`);
  if (v.secondContentType) head.push(`Content-Type: ${v.secondContentType}`);
  if (v.coding) {
    head.push(`Content-Encoding: ${v.coding.split(" ")[0]}`);
    if (v.coding === "gzip") body = zlib.gzipSync(body);
  }
  if (carriesRpc(v)) head.push("Mcp-Protocol-Version: 2025-06-18");
  const te = v.framing === "content-length+chunked" ? "chunked" : v.framing === "content-length" || v.framing === "none" ? null : v.framing;
  if (v.framing === "content-length" || v.framing === "content-length+chunked") head.push(`Content-Length: ${body.length}`);
  if (te !== null) head.push(`Transfer-Encoding: ${te}`);
  const tokens: string[] = [...v.connection, ...(v.pipelined ? [] : ["close"])];
  if (v.upgrade) head.push(`Upgrade: ${v.upgrade}`);
  if (tokens.length > 0) head.push(`Connection: ${tokens.join(", ")}`);
  if (v.expect100) head.push("Expect: 100-continue");
  const framed = te !== null ? chunkedBody(body, v.chunks, v.chunkExtension) : body;
  const request = Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), framed]);
  if (!v.pipelined) return request;
  return Buffer.concat([request, Buffer.from(`GET ${target}-next HTTP/1.1\r\nHost: ${u}\r\nConnection: close\r\n\r\n`, "latin1")]);
}

describe("differential: generated framing, encoding, charset and header variants", () => {
  let rig: Rig;
  let n = 0;

  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  it("no request reaches an upstream unrecorded, and no denied message reaches it in enforce mode", async () => {
    let reached = 0;
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(variants, async (v) => {
        for (const mode of ["monitor", "enforce"] as PolicyMode[]) {
          const side = rig.sides[mode];
          const path = `/mcp?case=${String(++n).padStart(4, "0")}`;
          const bytes = build(v, path, side.upstream[v.route].authority);
          // A variant may leave the connection waiting (a body the parser took for a request head): bounded.
          await sendRaw(side, v.route, [bytes], { timeoutMs: 1_500 }).catch(() => undefined);
          const findings = await differentialFindings(side, v.route, path, 1_500);
          sent++;
          if ((await parseAsUpstream(side.upstream[v.route].connections)).some((r) => r.url.includes(path))) reached++;
          expect(findings, `${mode} mode, ${JSON.stringify(v)}`).toEqual([]);
        }
      }),
      {
        numRuns: Number(process.env.DIFFERENTIAL_RUNS ?? 60),
        interruptAfterTimeLimit: 150_000,
        markInterruptAsFailure: false,
        // A failure prints its seed and path: DIFFERENTIAL_SEED=… DIFFERENTIAL_PATH=… replays it.
        ...(process.env.DIFFERENTIAL_SEED ? { seed: Number(process.env.DIFFERENTIAL_SEED), path: process.env.DIFFERENTIAL_PATH } : {}),
      },
    );
    // The harness is live: a good share of the variants reached the upstream (the rest were refused or denied).
    expect(reached).toBeGreaterThan(sent / 5);
    // Said in the output, so the list can be shortened as the decoding fixes land.
    console.info(`differential: ${sent} requests sent, ${reached} reached the upstream`);
  }, 240_000);
});
