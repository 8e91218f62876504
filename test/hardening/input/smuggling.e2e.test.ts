/**
 * Header injection and request smuggling, sent as raw bytes through the real proxy (in-process), both as
 * absolute-URI requests (plain HTTP proxying) and inside a decrypted CONNECT tunnel, to upstreams that record
 * the exact bytes they receive. The proxy must refuse an ambiguous message (400, on the record) or normalise
 * it, and never forward it; it must still serve afterwards.
 *
 * Hostile CONNECT targets (traversal, NUL, overlong names, bad ports) are in test/proxy/connect-targets.test.ts;
 * only numeric IPv4 aliases, which that file does not cover, are here.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  openTunnel,
  parseRawResponse,
  rawProxyExchange,
  readAll,
  startTestProxy,
  tlsThroughTunnel,
  type LogRecord,
  type RawResponse,
  type TestProxy,
} from "../../helpers/proxy-harness.js";
import { expectWellFormedLog, startRawUpstream, type RawUpstream } from "./input-kit.js";

/** `{U}` is replaced by the upstream's authority. Each must be refused with 400 before anything is forwarded. */
const REFUSED: [label: string, request: string][] = [
  ["a bare CR inside a header value (CRLF injection)", "GET /x HTTP/1.1\r\nHost: {U}\r\nX-A: one\rInjected: yes\r\n\r\n"],
  ["a bare LF inside a header value", "GET /x HTTP/1.1\r\nHost: {U}\r\nX-A: one\nInjected: yes\r\n\r\n"],
  ["an obs-fold continuation line", "GET /x HTTP/1.1\r\nHost: {U}\r\nX-A: one\r\n Injected: yes\r\n\r\n"],
  ["a space inside the request target", "GET /x Injected: HTTP/1.1\r\nHost: {U}\r\n\r\n"],
  ["a control character in the request target", "GET /x\x01y HTTP/1.1\r\nHost: {U}\r\n\r\n"],
  ["a tab in the request target", "GET /x\ty HTTP/1.1\r\nHost: {U}\r\n\r\n"],
  ["a NUL in the Host header", "GET /x HTTP/1.1\r\nHost: 127.0.0.1\0.evil\r\n\r\n"],
  ["a space before a header's colon", "POST /x HTTP/1.1\r\nHost: {U}\r\nContent-Length : 5\r\n\r\nhello"],
  ["two equal Content-Length headers", "POST /x HTTP/1.1\r\nHost: {U}\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"],
  ["two different Content-Length headers", "POST /x HTTP/1.1\r\nHost: {U}\r\nContent-Length: 5\r\nContent-Length: 30\r\n\r\nhelloGET /smuggled HTTP/1.1\r\n\r\n"],
  ["a Content-Length list", "POST /x HTTP/1.1\r\nHost: {U}\r\nContent-Length: 5, 5\r\n\r\nhello"],
  ["a signed Content-Length", "POST /x HTTP/1.1\r\nHost: {U}\r\nContent-Length: +5\r\n\r\nhello"],
  [
    "Content-Length and Transfer-Encoding together (CL.TE)",
    "POST /x HTTP/1.1\r\nHost: {U}\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: {U}\r\n\r\n",
  ],
  ["Transfer-Encoding: chunked twice", "POST /x HTTP/1.1\r\nHost: {U}\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"],
  ["Transfer-Encoding not ending in chunked", "POST /x HTTP/1.1\r\nHost: {U}\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n"],
  ["an obfuscated Transfer-Encoding", "POST /x HTTP/1.1\r\nHost: {U}\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"],
  ["a bad chunk size", "POST /x HTTP/1.1\r\nHost: {U}\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n"],
  ["a chunk line ending in a bare LF", "POST /x HTTP/1.1\r\nHost: {U}\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n"],
  ["two Host headers", "GET /x HTTP/1.1\r\nHost: {U}\r\nHost: evil.example\r\nConnection: close\r\n\r\n"],
  ["a 20 KB header (over the parser's limit)", `GET /x HTTP/1.1\r\nHost: {U}\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`],
];

describe("header injection and request smuggling", () => {
  let proxy: TestProxy;
  let plain: RawUpstream;
  let secure: RawUpstream;

  beforeAll(async () => {
    proxy = await startTestProxy();
    plain = await startRawUpstream({ tls: false });
    secure = await startRawUpstream({ tls: true });
  });

  afterAll(async () => {
    await plain?.close();
    await secure?.close();
    expectWellFormedLog((await proxy?.stop()) ?? []);
  });

  /** Sends raw request bytes as an absolute-URI request (the target rewritten to `http://U/...`). */
  async function viaAbsoluteUri(template: string): Promise<Buffer> {
    const text = template.replaceAll("{U}", plain.authority).replace(/^(\w+) \//, `$1 http://${plain.authority}/`);
    return rawProxyExchange(proxy, Buffer.from(text, "latin1"));
  }

  /** Sends raw request bytes inside a decrypted CONNECT tunnel to the TLS upstream. */
  async function viaTunnel(template: string): Promise<Buffer> {
    const { status, socket } = await openTunnel(proxy, secure.authority);
    expect(status).toBe(200);
    const tls = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    const done = readAll(tls);
    tls.write(Buffer.from(template.replaceAll("{U}", secure.authority), "latin1"));
    return done;
  }

  async function refusedRecords(): Promise<LogRecord[]> {
    return (await proxy.records()).filter((r) => r.event === "refused" && r.stage === "request");
  }

  async function expectStillServes(): Promise<void> {
    const before = plain.all().length;
    const answer = parseRawResponse(await viaAbsoluteUri("GET /normal HTTP/1.1\r\nHost: {U}\r\nConnection: close\r\n\r\n"));
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe("ok");
    expect(plain.all().slice(before)).toMatch(/^GET \/normal HTTP\/1\.1\r\n/);
    const tunnelled = parseRawResponse(await viaTunnel("GET /normal HTTP/1.1\r\nHost: {U}\r\nConnection: close\r\n\r\n"));
    expect(tunnelled.status).toBe(200);
  }

  for (const [how, send, upstreamOf] of [
    ["as an absolute-URI request", (t: string) => viaAbsoluteUri(t), () => plain],
    ["inside a CONNECT tunnel", (t: string) => viaTunnel(t), () => secure],
  ] as const) {
    describe(how, () => {
      it.each(REFUSED)("refuses %s with 400, forwards nothing, and records it", async (_label, template) => {
        const up = upstreamOf();
        const bytesBefore = up.all().length;
        const refusedBefore = (await refusedRecords()).length;
        const answer: RawResponse = parseRawResponse(await send(template));
        expect(answer.status).toBe(400);
        expect(answer.headers.connection).toBe("close");
        // Nothing reached the upstream: not the message, not a smuggled second one.
        expect(up.all().length).toBe(bytesBefore);
        expect(up.all()).not.toContain("Injected");
        expect(up.all()).not.toContain("smuggled");
        const refused = await proxy.waitForRecords((r) => r.event === "refused" && r.stage === "request", refusedBefore + 1);
        const record = refused.at(-1)!;
        expect(record).toMatchObject({ level: "warn", status: 400 });
        expect(String(record.reason)).toMatch(/malformed HTTP request \(HPE_|more than one Host header/);
        // The record escapes what it quotes: no raw control characters from the request make it into the log.
        expect(JSON.stringify(record)).not.toMatch(/[\0-\x08\x0b\x0c\x0e-\x1f]/);
        await expectStillServes();
      });
    });
  }

  describe("absolute-URI requests are normalised", () => {
    it("a Host header naming another host is replaced by the target's authority", async () => {
      const before = plain.all().length;
      const answer = parseRawResponse(await viaAbsoluteUri("GET /h1 HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"));
      expect(answer.status).toBe(200);
      const seen = plain.all().slice(before);
      expect(seen).toMatch(new RegExp(`^GET /h1 HTTP/1\\.1\\r\\n`));
      expect(seen.match(/^host:.*$/gim)).toEqual([`host: ${plain.authority}`]);
      expect(seen).not.toContain("evil.example");
      const http = await proxy.waitForRecord((r) => r.event === "http" && r.path === "/h1");
      expect(http).toMatchObject({ server: plain.authority, status: 200 });
    });

    it("an HTTP/1.0 request without Host gets one (upstream sees a valid HTTP/1.1 request)", async () => {
      const before = plain.all().length;
      const answer = parseRawResponse(await viaAbsoluteUri("GET /h2 HTTP/1.0\r\n\r\n"));
      expect(answer.status).toBe(200);
      const seen = plain.all().slice(before);
      expect(seen.match(/^host:.*$/gim)).toEqual([`host: ${plain.authority}`]);
    });

    it("a request target with userinfo is refused (400), and the password is not logged", async () => {
      const before = plain.all().length;
      const answer = parseRawResponse(
        await rawProxyExchange(proxy, `GET http://alice:s3cr3t-pw@${plain.authority}/u HTTP/1.1\r\nHost: ${plain.authority}\r\nConnection: close\r\n\r\n`),
      );
      expect(answer.status).toBe(400);
      expect(answer.body.toString()).toContain("userinfo");
      expect(plain.all().length).toBe(before);
      await proxy.waitForRecord((r) => r.event === "refused" && r.reason === "request target must not contain userinfo");
      expect(JSON.stringify(await proxy.records())).not.toContain("s3cr3t-pw");
      await expectStillServes();
    });
  });

  describe("CONNECT to numeric aliases of IP addresses", () => {
    // getaddrinfo reads these in inet_aton's forms: 0x7f.1 and 0x7f000001 are 127.0.0.1. Policy would judge a
    // "name" while the proxy connected to an address: refused like 999.1.1.1.
    it.each(["0x7f.1", "0x7f000001", "0x7f.0.0.1", "127.0x0.0.1", "1.2.3.0x4"])("refuses CONNECT %s:port (400)", async (alias) => {
      const before = secure.all().length;
      const answer = parseRawResponse(await rawProxyExchange(proxy, `CONNECT ${alias}:${secure.port} HTTP/1.1\r\nHost: x\r\n\r\n`));
      expect(answer.status).toBe(400);
      expect(answer.body.toString()).toContain("invalid IPv4 literal");
      expect(secure.all().length).toBe(before);
      await proxy.waitForRecord((r) => r.event === "refused" && r.stage === "connect" && r.target === `${alias}:${secure.port}`);
    });

    it("the canonical address still works", async () => {
      await expectStillServes();
    });
  });

  describe("hostile upstream responses", () => {
    const RESPONSES: [label: string, head: string][] = [
      ["Content-Length and Transfer-Encoding together", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"],
      ["two different Content-Length headers", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 7\r\n\r\nokay!!!"],
      ["a bare CR in a header value", "HTTP/1.1 200 OK\r\nX-A: one\rSet-Cookie: injected=1\r\nContent-Length: 2\r\n\r\nok"],
      ["an obs-fold continuation line", "HTTP/1.1 200 OK\r\nX-A: one\r\n Set-Cookie: injected=1\r\nContent-Length: 2\r\n\r\nok"],
      ["a NUL in a header value", "HTTP/1.1 200 OK\r\nX-A: o\0ne\r\nContent-Length: 2\r\n\r\nok"],
      ["a status line that is not HTTP", "HTTP/9.9 999 Nope\r\nContent-Length: 2\r\n\r\nok"],
    ];
    let hostile: RawUpstream;
    let answer = "";

    beforeAll(async () => {
      hostile = await startRawUpstream({ tls: false, answer: () => answer });
    });
    afterAll(async () => {
      await hostile?.close();
    });

    it.each(RESPONSES)("an upstream answering with %s: 502, nothing of it forwarded, on the record", async (_label, raw) => {
      answer = raw;
      const path = `/resp-${Math.random().toString(36).slice(2)}`;
      const reply = parseRawResponse(
        await rawProxyExchange(proxy, `GET http://${hostile.authority}${path} HTTP/1.1\r\nHost: ${hostile.authority}\r\nConnection: close\r\n\r\n`),
      );
      expect(reply.status).toBe(502);
      expect(reply.head.toLowerCase()).not.toContain("injected");
      expect(reply.headers["x-a"]).toBeUndefined();
      const http = await proxy.waitForRecord((r) => r.event === "http" && r.path === path);
      expect(http).toMatchObject({ status: 502, statusSource: "proxy", level: "warn" });
      expect((http.error as { code: string }).code).toMatch(/^upstream_/);
      await expectStillServes();
    });
  });

  it("a connection that sends garbage instead of HTTP gets 400 and is closed", async () => {
    const socket = net.connect(proxy.port, proxy.host);
    socket.on("error", () => undefined);
    await new Promise((resolve) => socket.once("connect", resolve));
    const done = readAll(socket);
    socket.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x00, 0x0d, 0x0a, 0x0d, 0x0a]));
    expect(parseRawResponse(await done).status).toBe(400);
    await expectStillServes();
  });
});
