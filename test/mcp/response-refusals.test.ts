/**
 * Enforce mode's refusals of an answer by its head, one by one: each refuses the case it names, with its
 * reason, and none refuses a plain answer. (What reaches the client when one applies is tested on the wire by
 * the header, charset and content-type attack tests; there a deeper check may also stop the same answer.)
 */
import { describe, expect, it } from "vitest";
import { McpFlow } from "../../src/mcp/flow.js";
import { RESPONSE_REFUSALS, refusalOf, responseHead } from "../../src/mcp/response-refusals.js";
import type { Exchange } from "../../src/proxy/exchange.js";

/** An MCP POST (or a legacy stream's GET) and its answer's head, as the exchange holds them. */
function head(typeLines: string[], opts: { status?: number; method?: string; hinted?: boolean } = {}) {
  const rawHeaders = typeLines.flatMap((line) => ["Content-Type", line]);
  const ex = {
    id: "ex-1",
    client: { address: "127.0.0.1", port: 1 },
    request: { method: opts.method ?? "POST", path: "/mcp", headers: opts.hinted === false ? {} : { "mcp-session-id": "s-1" } },
    response: { status: opts.status ?? 200, headers: typeLines.length > 0 ? { "content-type": typeLines[0] } : {}, rawHeaders },
  } as unknown as Exchange;
  const flow = new McpFlow(ex, "127.0.0.1:1", opts.hinted !== false, undefined);
  return responseHead(flow, ex.response!);
}

const reasons = (h: ReturnType<typeof head>) => RESPONSE_REFUSALS.filter((r) => r.check(h) !== null).map((r) => r.name);

describe("response refusals (enforce mode)", () => {
  it("a plain JSON answer or event stream is refused by none", () => {
    for (const type of ["application/json", "text/event-stream", "text/event-stream; charset=utf-8", "application/json; charset=UTF-8"]) {
      expect(refusalOf(head([type])), type).toBeNull();
    }
  });

  it("several Content-Type lines (a client may read another one)", () => {
    const h = head(["application/json", "text/event-stream; charset=utf-7"]);
    expect(reasons(h)[0]).toBe("several Content-Type lines");
    expect(refusalOf(h)).toBe("response has 2 Content-Type header lines; receivers may read either: not passed on");
    // Not yet known to be MCP, but a client may take it for a stream (a legacy GET): held to it too.
    expect(refusalOf(head(["text/plain", "text/event-stream"], { method: "GET", hinted: false }))).toMatch(/^response has 2 Content-Type header lines/);
    expect(refusalOf(head(["text/plain", "text/html"], { method: "GET", hinted: false }))).toBeNull();
  });

  it("an event stream under a type with a byte past printable ASCII (NEL before a charset Python would see)", () => {
    const h = head(["text/event-stream; \u0085x=1"]);
    expect(reasons(h)).toEqual(["event stream under a content-type with bytes past printable ASCII"]);
    expect(refusalOf(h)).toBe("event stream under a content-type with bytes past printable ASCII, which a client may read otherwise than the proxy: not passed on");
  });

  it("an event stream under a charset that may not read ASCII as ASCII", () => {
    const h = head(["text/event-stream; charset=utf-7"]);
    expect(reasons(h)).toEqual(["event stream under a charset that may not read ASCII as ASCII"]);
    expect(refusalOf(h)).toBe('event stream under charset "utf-7", which a client may read otherwise than the proxy: not passed on');
  });

  it("a JSON answer of an MCP exchange under a type with a byte past printable ASCII", () => {
    const h = head(["application/json; \u0085charset=utf-7"]);
    expect(reasons(h)).toEqual(["JSON answer of an MCP exchange under a content-type with bytes past printable ASCII"]);
    expect(refusalOf(h)).toMatch(/^JSON answer under a content-type with bytes past printable ASCII/);
    expect(refusalOf(head(["application/json; \u0085charset=utf-7"], { hinted: false, method: "GET" }))).toBeNull();
  });

  it("an MCP answer with a body the proxy does not decode, where its client reads messages", () => {
    const h = head(["text/plain"]);
    expect(reasons(h)).toEqual(["answer with a body neither JSON nor an event stream"]);
    expect(refusalOf(h)).toBe("response body is not JSON or an event stream (content-type: text/plain): not passed on");
    // 202 and 204 carry no messages; an error page of another status is the client's to read.
    for (const status of [202, 204, 404]) expect(refusalOf(head(["text/plain"], { status })), String(status)).toBeNull();
  });
});
