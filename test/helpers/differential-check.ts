/**
 * The differential check: the bytes an upstream received, parsed again as a lenient server would
 * (node:http with `insecureHTTPParser`: bare LF line ends, requests after `Connection: close`, and so on),
 * compared with the proxy's records. Promise 1 fails when the upstream could read a request that has no
 * `http` record, or a JSON-RPC message that has no `rpc` record; in enforce mode, also when a message the
 * proxy denied (or a call of a denied tool) reached the upstream.
 *
 * Each connection is read twice, and the larger reading counts: once by a server that honours Upgrade (the
 * bytes after an Upgrade request start over as if on a new connection: "what if it had not switched"),
 * once by a server that ignores Upgrade (the request's body is a body).
 */
import http from "node:http";
import { Duplex } from "node:stream";
import zlib from "node:zlib";
import type { LogRecord } from "./proxy-harness.js";
import { decodeText, sniffCharset } from "./charsets.js";

export interface UpstreamRequest {
  connection: number;
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Every Content-Type line, in order (`headers` keeps only the first). */
  contentTypes: string[];
  body: Buffer;
}

function contentTypesOf(req: http.IncomingMessage): string[] {
  const raw = req.rawHeaders;
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === "content-type") out.push(raw[i + 1]!);
  return out;
}

/** One stream that hands `bytes` to whoever reads it, once, and swallows what is written back. */
class ReplayStream extends Duplex {
  private sent = false;
  constructor(private readonly bytes: Buffer) {
    super();
  }
  override _read(): void {
    if (this.sent) return;
    this.sent = true;
    this.push(this.bytes);
  }
  override _write(_chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    done();
  }
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

/** The requests a lenient server reads from one connection's bytes. */
async function readRequests(bytes: Buffer, honourUpgrade: boolean, depth = 0): Promise<Omit<UpstreamRequest, "connection">[]> {
  if (bytes.length === 0 || depth > 8) return [];
  const found: (Omit<UpstreamRequest, "connection"> & { chunks: Buffer[] })[] = [];
  const after: Buffer[] = [];
  const server = http.createServer({ insecureHTTPParser: true }, (req, res) => {
    const entry = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, contentTypes: contentTypesOf(req), body: Buffer.alloc(0), chunks: [] as Buffer[] };
    found.push(entry);
    req.on("data", (c: Buffer) => entry.chunks.push(c));
    req.on("error", () => undefined);
    res.on("error", () => undefined);
    res.end();
  });
  server.on("clientError", (_err, socket: Duplex) => socket.destroy());
  const takeOver = (req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
    found.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, contentTypes: contentTypesOf(req), body: Buffer.alloc(0), chunks: [] });
    after.push(head);
    socket.destroy();
  };
  server.on("connect", takeOver);
  if (honourUpgrade) server.on("upgrade", takeOver);
  const stream = new ReplayStream(bytes);
  server.emit("connection", stream);
  // The parser runs synchronously on the bytes; bodies reach their streams within a few ticks.
  for (let i = 0; i < 3; i++) await settle();
  stream.destroy();
  const out: Omit<UpstreamRequest, "connection">[] = found.map(({ chunks, ...r }) => ({ ...r, body: Buffer.concat(chunks) }));
  for (const rest of after) out.push(...(await readRequests(rest, honourUpgrade, depth + 1)));
  return out;
}

/** Every request the upstream could have read, per connection the larger of the two readings. */
export async function parseAsUpstream(connections: readonly Buffer[]): Promise<UpstreamRequest[]> {
  const all: UpstreamRequest[] = [];
  for (const [connection, bytes] of connections.entries()) {
    const honouring = await readRequests(bytes, true);
    const ignoring = await readRequests(bytes, false);
    for (const r of honouring.length >= ignoring.length ? honouring : ignoring) all.push({ ...r, connection });
  }
  return all;
}

export type FindingKind = "unrecorded_request" | "unrecorded_message" | "denied_reached_upstream";

export interface Finding {
  kind: FindingKind;
  detail: string;
}

export interface CheckOptions {
  /** The upstream's authority, as records name the server. */
  server: string;
  enforce: boolean;
  /** Tools the policy denies: a call of one reaching the upstream in enforce mode is a finding. */
  deniedTools: readonly string[];
}

const UNDO = new Map<string, (b: Buffer) => Buffer>([
  ["gzip", zlib.gunzipSync],
  ["x-gzip", zlib.gunzipSync],
  ["deflate", zlib.inflateSync],
  ["br", zlib.brotliDecompressSync],
]);

/**
 * JSON-RPC messages in a body under every reading a server might take: the bytes as they are (a server that
 * ignores Content-Encoding) or with the named coding undone; decoded as UTF-8, in the charset of any
 * Content-Type line, or in the encoding the zero bytes suggest.
 */
function messagesIn(req: UpstreamRequest): Record<string, unknown>[] {
  const bodies = [req.body];
  const undo = UNDO.get(String(req.headers["content-encoding"] ?? "").trim().toLowerCase());
  try {
    if (undo) bodies.push(undo(req.body));
  } catch {
    // not in this coding after all
  }
  const labels = req.contentTypes.flatMap(charsetLabels);
  const texts = new Set<string>();
  for (const body of bodies) {
    // A label with no byte order (utf-16, utf-32) is read both ways.
    const orderless = labels.filter((c) => /^utf-?(16|32)$/i.test(c)).map((c) => `${c}be`);
    for (const charset of ["utf-8", ...labels, ...orderless, sniffCharset(body)]) {
      const text = decodeText(body, charset);
      if (text !== undefined) texts.add(text.replace(/^\uFEFF/, ""));
    }
  }
  const out: Record<string, unknown>[] = [];
  for (const value of [...texts].map(parseJson)) {
    for (const m of Array.isArray(value) ? value : [value]) {
      if (typeof m === "object" && m !== null && "jsonrpc" in m && typeof (m as { method?: unknown }).method === "string") {
        out.push(m as Record<string, unknown>);
      }
    }
  }
  return out;
}

/**
 * The charsets a server may read in one Content-Type line: `charset=x` anywhere, with spaces (or NEL, which
 * Python strips) around `=` and quotes, and the RFC 2231 form `charset*=utf-8''x` (Python's email.message).
 */
export function charsetLabels(type: string): string[] {
  const forms = [/charset=([^;\s]+)/i, /charset[\s\x85]*=[\s\x85]*"?([^";\s\x85]+)/i, /charset\*(?:0\*?)?[\s\x85]*=[\s\x85]*"?[^']*'[^']*'([^";\s]+)/i];
  return [...new Set(forms.map((f) => f.exec(type)?.[1]).filter((c) => c !== undefined).map((c) => c.replace(/"$/, "")))];
}

/** What the upstream read that the records do not account for. */
export function compareWithRecords(requests: readonly UpstreamRequest[], records: readonly LogRecord[], opts: CheckOptions): Finding[] {
  const findings: Finding[] = [];
  const mine = records.filter((r) => r.server === opts.server);
  const httpCount = new Map<string, number>();
  for (const r of mine) if (r.event === "http") httpCount.set(`${r.method} ${r.path}`, (httpCount.get(`${r.method} ${r.path}`) ?? 0) + 1);
  const seen = new Map<string, number>();
  for (const req of requests) {
    const key = `${req.method} ${req.url}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    if (n > (httpCount.get(key) ?? 0)) findings.push({ kind: "unrecorded_request", detail: `${key} (connection ${req.connection}, request ${n} with this line) has no http record` });
    for (const m of messagesIn(req)) {
      const [tool, goTool] = toolNames(m.params);
      const label = `${String(m.method)}${typeof tool === "string" ? ` ${tool}` : ""} id ${JSON.stringify(m.id)} in ${key}`;
      if (opts.enforce && m.method === "tools/call" && typeof tool === "string" && [tool, goTool].some((t) => t !== undefined && opts.deniedTools.includes(looseName(t)))) {
        findings.push({ kind: "denied_reached_upstream", detail: `${label}: a denied tool reached the upstream in enforce mode` });
      }
      const rpc = mine.filter(
        (r) => r.event === "rpc" && r.direction === "client_to_server" && r.path === req.url && r.method === m.method && (m.id === undefined || r.id === m.id),
      );
      if (rpc.length === 0) findings.push({ kind: "unrecorded_message", detail: `${label} has no rpc record` });
      const denied = rpc.find((r) => (r.decision as { action?: string; enforced?: boolean } | undefined)?.enforced === true && (r.decision as { action?: string }).action === "deny");
      if (opts.enforce && denied) findings.push({ kind: "denied_reached_upstream", detail: `${label}: denied (flow ${String(denied.flow)}) yet reached the upstream` });
    }
  }
  return findings;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The tool name as JSON.parse reads it, and as Go's encoding/json does (the last member equal to `name` under case folding). */
function toolNames(params: unknown): [string | undefined, string | undefined] {
  if (typeof params !== "object" || params === null) return [undefined, undefined];
  const p = params as Record<string, unknown>;
  const folded = Object.keys(p).filter((k) => k.toLowerCase() === "name").at(-1);
  const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);
  return [str(p.name), str(folded === undefined ? undefined : p[folded])];
}

/** A tool name as a server that normalises names reads it (NFKC, no control or invisible characters, trimmed, lower case). */
function looseName(name: string): string {
  return name.normalize("NFKC").replace(/[\p{Cc}\p{Cf}]/gu, "").trim().toLowerCase();
}
