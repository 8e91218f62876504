/**
 * Request-body framing, attacked with raw bytes through the in-process proxy, on both routes (a decrypted
 * CONNECT tunnel to a TLS upstream, absolute-URI requests to a plain one) and in both policy modes, against
 * upstreams that record the exact bytes they receive. The class: a body that reaches the upstream unframed
 * (Node's client sends a GET/DELETE/HEAD/OPTIONS body raw when it carries no framing header), or framed
 * otherwise than the proxy parsed it, is read by the upstream as a second request nobody judged or recorded.
 *
 * Every case ends with the differential check (test/helpers/differential-check.ts): each request the
 * upstream could parse has an `http` record, each JSON-RPC message an `rpc` record, and in enforce mode no
 * denied message reached it. Each case also states its own outcome: refused (400, a `refused` record,
 * nothing forwarded) or forwarded with the proxy's own framing. Last, a body one value past the JSON value
 * bound, counted before parsing: denied before the upstream sees a byte in enforce mode, forwarded byte for
 * byte with one `invalid` record in monitor mode.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_VALUES } from "../../../src/body/limits.js";
import { parseAsUpstream } from "../../helpers/differential-check.js";
import {
  ALLOWED_TOOL,
  callBody,
  chunked,
  DENIED_TOOL,
  differentialFindings,
  sendRaw,
  startRig,
  type PolicyMode,
  type Rig,
  type Route,
} from "../../helpers/differential-rig.js";
import { parseRawResponse, type LogRecord } from "../../helpers/proxy-harness.js";

const MCP = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-06-18\r\n";

/** A complete second request, hidden in a body: a denied call on `path`-inner. */
function inner(path: string, u: string): string {
  const body = callBody(666, DENIED_TOOL);
  return `POST ${path}-inner HTTP/1.1\r\nHost: ${u}\r\n${MCP}Content-Length: ${body.length}\r\n\r\n${body}`;
}

interface Case {
  name: string;
  /** The bytes to send, given this case's unique path and the upstream's authority (for Host). */
  parts(path: string, u: string): string[];
  /** Refused with 400 and a record (nothing forwarded), or forwarded. */
  refused: RegExp | false;
  /** Written after the previous part's answer began (Expect: 100-continue). */
  waitBetween?: boolean;
}

const CASES: Case[] = [
  ...["GET", "DELETE", "HEAD", "OPTIONS"].map((method) => ({
    name: `${method} with a chunked body that is a second request`,
    parts: (p: string, u: string) => [`${method} ${p} HTTP/1.1\r\nHost: ${u}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked(inner(p, u))}`],
    refused: false as const,
  })),
  {
    name: "GET with a Content-Length body that is a second request",
    parts: (p, u) => [`GET ${p} HTTP/1.1\r\nHost: ${u}\r\nContent-Length: ${inner(p, u).length}\r\nConnection: close\r\n\r\n${inner(p, u)}`],
    refused: false,
  },
  {
    name: "Connection naming Content-Length (the length would be dropped, the body sent raw)",
    parts: (p, u) => [`GET ${p} HTTP/1.1\r\nHost: ${u}\r\nContent-Length: ${inner(p, u).length}\r\nConnection: close, Content-Length\r\n\r\n${inner(p, u)}`],
    refused: /Connection header names Content-Length/,
  },
  {
    name: "Connection naming Transfer-Encoding",
    parts: (p, u) => [`DELETE ${p} HTTP/1.1\r\nHost: ${u}\r\nTransfer-Encoding: chunked\r\nConnection: Transfer-Encoding, close\r\n\r\n${chunked(inner(p, u))}`],
    refused: /Connection header names Transfer-Encoding/,
  },
  {
    name: "Connection naming Host",
    parts: (p, u) => [`POST ${p} HTTP/1.1\r\nHost: ${u}\r\n${MCP}Content-Length: ${callBody(1, ALLOWED_TOOL).length}\r\nConnection: host, close\r\n\r\n${callBody(1, ALLOWED_TOOL)}`],
    refused: /Connection header names Host/,
  },
  {
    name: "Transfer-Encoding: gzip, chunked (a coding the proxy does not undo)",
    parts: (p, u) => [`POST ${p} HTTP/1.1\r\nHost: ${u}\r\n${MCP}Transfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n${chunked(callBody(2, DENIED_TOOL))}`],
    refused: /Transfer-Encoding|HPE_/,
  },
  {
    name: "Transfer-Encoding: Chunked in another case, and with a chunk extension",
    parts: (p, u) => [`POST ${p} HTTP/1.1\r\nHost: ${u}\r\n${MCP}Transfer-Encoding: Chunked\r\nConnection: close\r\n\r\n${callBody(3, DENIED_TOOL).length.toString(16)};ext=1\r\n${callBody(3, DENIED_TOOL)}\r\n0\r\n\r\n`],
    refused: false,
  },
  {
    name: "chunked with a trailer section",
    parts: (p, u) => [`POST ${p} HTTP/1.1\r\nHost: ${u}\r\n${MCP}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked(callBody(4, DENIED_TOOL)).slice(0, -2)}X-Trailer: 1\r\n\r\n`],
    refused: false,
  },
  {
    name: "an obs-fold continuation of Transfer-Encoding",
    parts: (p, u) => [`GET ${p} HTTP/1.1\r\nHost: ${u}\r\nTransfer-Encoding:\r\n chunked\r\nConnection: close\r\n\r\n${chunked(inner(p, u))}`],
    refused: /HPE_/,
  },
  {
    name: "HTTP/1.0 with a Content-Length body (a denied call)",
    parts: (p, u) => [`POST ${p} HTTP/1.0\r\nHost: ${u}\r\n${MCP}Content-Length: ${callBody(5, DENIED_TOOL).length}\r\n\r\n${callBody(5, DENIED_TOOL)}`],
    refused: false,
  },
  {
    name: "HTTP/1.0 with Transfer-Encoding (RFC 9112 §6.1: faulty framing)",
    parts: (p, u) => [`GET ${p} HTTP/1.0\r\nHost: ${u}\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(inner(p, u))}`],
    refused: /HTTP\/1\.0 request with Transfer-Encoding/,
  },
  {
    name: "a JSON-RPC body on a GET (JSON content type): judged like any MCP body",
    parts: (p, u) => [`GET ${p} HTTP/1.1\r\nHost: ${u}\r\n${MCP}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked(callBody(6, DENIED_TOOL))}`],
    refused: false,
  },
  {
    name: "a JSON-RPC body on a DELETE with no content type",
    parts: (p, u) => [`DELETE ${p} HTTP/1.1\r\nHost: ${u}\r\nContent-Length: ${callBody(7, DENIED_TOOL).length}\r\nConnection: close\r\n\r\n${callBody(7, DENIED_TOOL)}`],
    refused: false,
  },
  {
    name: "pipelined requests after a body (allowed call, then a denied one)",
    parts: (p, u) => [
      `POST ${p} HTTP/1.1\r\nHost: ${u}\r\n${MCP}Content-Length: ${callBody(8, ALLOWED_TOOL).length}\r\n\r\n${callBody(8, ALLOWED_TOOL)}` +
        `POST ${p}-second HTTP/1.1\r\nHost: ${u}\r\n${MCP}Content-Length: ${callBody(9, DENIED_TOOL).length}\r\nConnection: close\r\n\r\n${callBody(9, DENIED_TOOL)}`,
    ],
    refused: false,
  },
  {
    name: "Expect: 100-continue, then the body (a denied call)",
    parts: (p, u) => [`POST ${p} HTTP/1.1\r\nHost: ${u}\r\n${MCP}Expect: 100-continue\r\nContent-Length: ${callBody(10, DENIED_TOOL).length}\r\nConnection: close\r\n\r\n`, callBody(10, DENIED_TOOL)],
    refused: false,
    waitBetween: true,
  },
];

/** A call of the denied tool whose arguments take it one value past the bound (a member is a colon and a comma). */
function overBound(id: number): string {
  const members = Array.from({ length: MAX_JSON_VALUES / 2 + 1 }, (_, i) => `"k${i}":1`).join(",");
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${DENIED_TOOL}","arguments":{${members}}}}`;
}

/** `body` as chunks of `size` bytes and the last chunk. */
function inChunks(body: string, size: number): string {
  const out: string[] = [];
  for (let at = 0; at < body.length; at += size) out.push(`${Math.min(size, body.length - at).toString(16)}\r\n${body.slice(at, at + size)}\r\n`);
  return `${out.join("")}0\r\n\r\n`;
}

describe("request-body framing: what reaches the upstream is what the proxy framed, judged and recorded", () => {
  let rig: Rig;
  let n = 0;

  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  for (const mode of ["monitor", "enforce"] as PolicyMode[]) {
    for (const route of ["tunnel", "absolute"] as Route[]) {
      describe(`${mode} mode, ${route === "tunnel" ? "inside a CONNECT tunnel" : "as absolute-URI requests"}`, () => {
        it.each(CASES)("$name", async (c) => {
          const side = rig.sides[mode];
          const up = side.upstream[route];
          const path = `/mcp?case=${String(++n).padStart(4, "0")}`;
          const refusedBefore = (await side.proxy.records()).filter((r) => r.event === "refused").length;
          const answer = parseRawResponse(await sendRaw(side, route, c.parts(path, up.authority), { waitBetween: c.waitBetween ?? false }));
          expect(await differentialFindings(side, route, path, 3_000)).toEqual([]);
          const reached = (await parseAsUpstream(up.connections)).filter((r) => r.url === path || r.url.startsWith(`${path}-`));
          // Nothing hidden in a body was ever read as a request of its own.
          expect(reached.filter((r) => r.url.endsWith("-inner"))).toEqual([]);
          if (c.refused) {
            expect(answer.status).toBe(400);
            expect(reached).toEqual([]);
            const refused = (await side.proxy.records()).filter((r: LogRecord) => r.event === "refused");
            expect(refused.length).toBe(refusedBefore + 1);
            expect(String(refused.at(-1)!.reason)).toMatch(c.refused);
          } else {
            expect(answer.status).not.toBe(400);
            // Monitor mode forwards everything; enforce mode only what policy allows (the check above).
            if (mode === "monitor") expect(reached.length).toBeGreaterThan(0);
            for (const r of reached) {
              // The proxy's own framing, never the client's Expect (the proxy answered it already).
              expect(r.headers.expect).toBeUndefined();
              if (r.body.length > 0) expect(r.headers["content-length"] !== undefined || r.headers["transfer-encoding"] === "chunked").toBe(true);
            }
          }
        });
      });
    }
  }

  // The value count is taken before parsing: the proxy cannot read what a lenient server (JSON.parse) can.
  for (const mode of ["enforce", "monitor"] as PolicyMode[]) {
    for (const [route, framing] of [["tunnel", "length"], ["absolute", "length"], ["tunnel", "chunked"]] as [Route, "length" | "chunked"][]) {
      it(`a body just over ${MAX_JSON_VALUES} JSON values, ${mode} mode, ${route}, ${framing === "length" ? "Content-Length" : "in 512-byte chunks"}: ${mode === "enforce" ? "denied, never reaching the upstream" : "forwarded byte-identical, recorded as unread"}`, async () => {
        const side = rig.sides[mode];
        const up = side.upstream[route];
        const path = `/mcp?case=${String(++n).padStart(4, "0")}`;
        const body = overBound(n);
        const answer = parseRawResponse(
          await sendRaw(side, route, [`POST ${path} HTTP/1.1\r\nHost: ${up.authority}\r\n${MCP}${framing === "length" ? `Content-Length: ${body.length}\r\n` : "Transfer-Encoding: chunked\r\n"}Connection: close\r\n\r\n${framing === "length" ? body : inChunks(body, 512)}`], { timeoutMs: 10_000 }),
        );
        // Monitor mode leaves one finding for good (below): wait for the exchange's records, not out the poll.
        for (let i = 0; i < 100 && !(await side.proxy.records()).some((r) => r.event === "http" && r.path === path); i++) await new Promise((r) => setTimeout(r, 50));
        const findings = await differentialFindings(side, route, path, mode === "enforce" ? 5_000 : 0);
        const reached = (await parseAsUpstream(up.connections)).filter((r) => r.url === path);
        const records = (await side.proxy.records()).filter((r) => r.path === path);
        const rpc = records.filter((r) => r.event === "rpc" && r.direction === "client_to_server");
        // One record of the body as sent, unread: its bytes are all of the body's.
        expect(rpc).toHaveLength(1);
        expect(rpc[0]).toMatchObject({ kind: "invalid", bytes: body.length, method: null });
        expect(String(rpc[0]!.reason)).toMatch(/json_too_many_values/);
        if (mode === "enforce") {
          expect(findings).toEqual([]);
          expect(reached).toEqual([]);
          expect(rpc[0]!.decision).toMatchObject({ action: "deny", enforced: true });
          // The client is told why, as a JSON-RPC error the proxy wrote (one response, nothing of the upstream's).
          const error = JSON.parse(answer.body.toString("utf8")) as { error?: { code?: number; message?: string } };
          expect(error.error?.code).toBe(-32052);
          expect(error.error?.message).toMatch(/more than 200000 values/);
        } else {
          // Forwarded byte for byte; the upstream's lenient reading (JSON.parse has no value bound) is the one
          // message the records hold only as this unread body.
          expect(findings.map((f) => f.kind)).toEqual(["unrecorded_message"]);
          expect(reached).toHaveLength(1);
          expect(reached[0]!.body.toString("latin1")).toBe(body);
          expect(answer.status).toBe(200);
          expect(answer.body.toString("utf8")).toBe(JSON.stringify({ jsonrpc: "2.0", id: n, result: { content: [{ type: "text", text: `ran ${DENIED_TOOL}` }] } }));
        }
      }, 30_000);
    }
  }
});
